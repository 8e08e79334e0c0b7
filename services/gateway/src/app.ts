import express, { type Express, type RequestHandler, type Router } from "express";
import type { Logger } from "@tog/core";
import type { Metrics, ReadinessCheck } from "@tog/ops";
import {
  createHttpApp,
  type AccessTokens,
  type ApiDocs,
  type Auth,
  type CorsSettings,
  type LoadShedder,
  type RateLimits,
} from "@tog/edge";
import { publicApiDocs } from "@tog/api";
import { registerDocsRoutes } from "./docs.routes.ts";
import { registerHealthRoutes } from "./health.routes.ts";

/** What a route module gets to mount its routes (tasks, approvals, tokens). */
export interface RouteContext {
  router: Router;
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
  metrics?: Metrics | undefined;
  /** Answers 503 + Retry-After at once beyond the gateway's capacity. */
  shedder?: LoadShedder | undefined;
}

export interface GatewayApp {
  app: Express;
  docs: ApiDocs;
}

export function createGatewayApp(options: GatewayAppOptions): GatewayApp {
  // The whole public API (sessions and streams too, served by their own services under the same
  // base URL), as libs/api defines it; this app mounts the gateway's part of it.
  const docs = publicApiDocs();
  const router = express.Router();
  registerHealthRoutes(router, {
    docs,
    logger: options.logger,
    version: options.version,
    checks: options.readinessChecks,
    readinessTimeoutMs: options.readinessTimeoutMs,
  });
  registerDocsRoutes(router);
  for (const mount of options.modules ?? [])
    mount({
      router,
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
    shedder: options.shedder,
    maxBodyBytes: options.maxBodyBytes,
    cors: options.cors,
    routes: (a) => a.use(router),
  });
  return { app, docs };
}
