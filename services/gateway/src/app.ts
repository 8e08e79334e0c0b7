import express, { type Express, type RequestHandler, type Router } from "express";
import type { Logger } from "@tog/core";
import type { Metrics } from "@tog/ops";
import { ApiDocs, createHttpApp, type AccessTokens, type Auth, type CorsSettings, type RateLimits } from "@tog/edge";
import { registerDocsRoutes } from "./docs.routes.ts";
import { registerHealthRoutes } from "./health.routes.ts";
import type { ReadinessCheck } from "./readiness.ts";

/** What a route module gets to mount its routes (later: tasks, approvals, sessions…). */
export interface RouteContext {
  router: Router;
  docs: ApiDocs;
  auth: Auth;
  /** Per-route rate limits; mount after auth. */
  limits: RateLimits;
  /** Idempotency-Key handling; mount after the rate limit. */
  idempotency: RequestHandler;
  tokens: AccessTokens;
}

export type RouteModule = (ctx: RouteContext) => void;

export interface GatewayAppOptions {
  logger: Logger;
  version: string;
  auth: Auth;
  limits: RateLimits;
  idempotency: RequestHandler;
  tokens: AccessTokens;
  cors: CorsSettings;
  maxBodyBytes: number;
  readinessChecks: readonly ReadinessCheck[];
  readinessTimeoutMs: number;
  /** Route modules mounted after the probes, in order. */
  modules?: RouteModule[];
  /**
   * OpenAPI registries of the routes other services serve under the same base URL (sessions,
   * streams), so /api/v1/openapi.json describes the whole public API.
   */
  docsInclude?: ApiDocs["registry"][];
  metrics?: Metrics | undefined;
}

export interface GatewayApp {
  app: Express;
  docs: ApiDocs;
}

/** Every tag the public document's operations use, in reading order. */
export const API_TAGS = [
  { name: "Tasks", description: "Submit, list, inspect and cancel tasks; their event history and timeline." },
  { name: "Approvals", description: "Human approval decisions for workflows waiting on an APPROVAL_REQUESTED." },
  { name: "Streaming", description: "Live events of a workflow over Server-Sent Events or WebSocket, resumable by id." },
  { name: "Sessions", description: "Conversations: lists, metadata, history, turns, title, soft delete." },
  { name: "Auth", description: "Short-lived access tokens for the streaming routes." },
  { name: "Health", description: "Probes and this document (no authentication)." },
];

export function createGatewayApp(options: GatewayAppOptions): GatewayApp {
  const docs = new ApiDocs({
    title: "Task Orchestration Gateway API",
    version: options.version,
    description:
      "HTTP API of the Task Orchestration Gateway. Every endpoint lives under /api/v1; the probes are also served at the server root. Interactive documentation: /api/v1/docs.",
    include: options.docsInclude,
    license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    servers: [{ url: "/", description: "The server that serves this document (paths include /api/v1)." }],
    tags: API_TAGS,
  });
  const router = express.Router();
  registerHealthRoutes(router, {
    docs,
    logger: options.logger,
    version: options.version,
    checks: options.readinessChecks,
    readinessTimeoutMs: options.readinessTimeoutMs,
  });
  registerDocsRoutes(router);
  for (const mount of options.modules ?? []) mount({
      router,
      docs,
      auth: options.auth,
      limits: options.limits,
      idempotency: options.idempotency,
      tokens: options.tokens,
    });
  // Build the document once now, so a schema that cannot be described fails at start-up.
  docs.json();
  const app = createHttpApp({
    logger: options.logger,
    metrics: options.metrics,
    maxBodyBytes: options.maxBodyBytes,
    cors: options.cors,
    routes: (a) => a.use(router),
  });
  return { app, docs };
}
