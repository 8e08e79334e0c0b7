import type http from "node:http";
import express, { type Express } from "express";
import type { Logger } from "@tog/core";
import { ApiDocs, createHttpApp, type Auth, type CorsSettings } from "@tog/edge";
import type { ReadinessCheck } from "@tog/ops";
import { registerHealthRoutes } from "./health.routes.ts";
import type { HubRegistry } from "./hub/hub-registry.ts";
import type { TaskOwners } from "./ownership.ts";
import { createSseEndpoint } from "./sse/sse-endpoint.ts";
import type { SseSink } from "./sse/sse-stream.ts";
import type { StreamContext, StreamSettings } from "./stream-context.ts";
import { registerStreamRoutes } from "./stream.routes.ts";
import { ConnectionBudget, Ticker } from "./ticker.ts";
import { attachWebSocketEndpoint, type WebSocketEndpoint } from "./ws/ws-server.ts";

export interface StreamAppOptions {
  logger: Logger;
  version: string;
  auth: Auth;
  owners: TaskOwners;
  registry: HubRegistry;
  /** Counts stream opens: `createRateLimiter(...).forRoute()` of the streams' own limiter (main.ts). */
  rateLimit: StreamContext["rateLimit"];
  settings: StreamSettings;
  onSlowClose?: StreamContext["onSlowClose"];
  maxConnections: number;
  cors: CorsSettings;
  readinessChecks: ReadinessCheck[];
  readinessTimeoutMs?: number;
}

export interface StreamApp {
  /** The express app: probes, OpenAPI, preflights, the documented routes. */
  app: Express;
  /** What the HTTP server runs: GET /api/v1/stream/sse directly, everything else through `app`. */
  handler: http.RequestListener;
  docs: ApiDocs;
  /** Adds the WebSocket endpoint to the server the app listens on. */
  attach(server: http.Server): void;
  /** Ends every SSE stream and closes every WebSocket (shutdown): clients resume elsewhere. */
  closeStreams(): void;
  stats(): { sse: number; websocket: number; hubs: number };
}

export function createStreamApp(options: StreamAppOptions): StreamApp {
  const { logger, registry } = options;
  const budget = new ConnectionBudget(options.maxConnections);
  const ctx: StreamContext = {
    auth: options.auth,
    owners: options.owners,
    registry,
    budget,
    rateLimit: options.rateLimit,
    logger,
    settings: options.settings,
    onSlowClose: options.onSlowClose,
  };
  const keepAlive = new Ticker<SseSink>(options.settings.keepAliveMs, (sink) => sink.keepAlive());
  let ws: WebSocketEndpoint | undefined;

  const docs = new ApiDocs({
    title: "Task Orchestration Gateway: stream service",
    version: options.version,
    description:
      "Real-time event streams (SSE and WebSocket), served by their own service under /api/v1/stream. " +
      "Delivery is at least once; clients deduplicate by `seq` and resume with the last id they saw.",
  });
  const router = express.Router();
  registerHealthRoutes(router, {
    docs,
    version: options.version,
    checks: options.readinessChecks,
    timeoutMs: options.readinessTimeoutMs ?? 2_000,
    logger,
  });
  const sse = createSseEndpoint(ctx, keepAlive, options.cors);
  registerStreamRoutes(router, docs, ctx, sse);
  router.get("/api/v1/stream/openapi.json", docs.handler());
  docs.json();
  const app = createHttpApp({ logger, maxBodyBytes: 16 * 1024, cors: options.cors, routes: (a) => a.use(router) });

  return {
    app,
    handler: (req, res) => {
      if (!sse.handle(req, res)) app(req, res);
    },
    docs,
    attach(server) {
      ws = attachWebSocketEndpoint(server, ctx);
    },
    closeStreams() {
      keepAlive.stop();
      for (const sink of keepAlive.items()) {
        sink.sub?.close();
        if (!sink.res.writableEnded) sink.res.end();
      }
      ws?.closeAll();
    },
    stats: () => ({ sse: keepAlive.size, websocket: ws?.connections ?? 0, hubs: registry.size }),
  };
}
