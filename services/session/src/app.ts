import express, { type Express } from "express";
import type { PingableDb } from "@tog/db";
import type { Logger } from "@tog/core";
import { postgresCheck, readinessHandler, redisCheck, type Metrics } from "@tog/ops";
import type { Redis } from "@tog/redis";
import { ApiDocs, createHttpApp, type Auth, type CorsSettings, type RateLimits } from "@tog/edge";
import type { SessionService } from "./sessions/session.service.ts";
import { registerSessionRoutes } from "./sessions/session.routes.ts";

// The session service's HTTP app: the six `/api/v1/sessions*` routes behind the shared edge
// stack, plus its own probes at the root (`/health`, `/readiness`: internal, not routed
// publicly) and its part of the OpenAPI document at `/openapi.json`.

export const SESSION_SERVICE_VERSION = "0.1.0";

export interface SessionAppOptions {
  logger: Logger;
  metrics?: Metrics | undefined;
  auth: Auth;
  limits: RateLimits;
  cors: CorsSettings;
  maxBodyBytes: number;
  service: SessionService;
  retentionDays: number;
  /** Readiness: PostgreSQL and Redis. */
  db: PingableDb;
  redis: Redis;
  readinessTimeoutMs: number;
}

export interface SessionApp {
  app: Express;
  docs: ApiDocs;
}

export function createSessionDocs(): ApiDocs {
  return new ApiDocs({
    title: "Task Orchestration Gateway API — sessions",
    version: SESSION_SERVICE_VERSION,
    description: "Session management, served by the session service under /api/v1/sessions.",
  });
}

export function createSessionApp(options: SessionAppOptions): SessionApp {
  const docs = createSessionDocs();
  const router = express.Router();
  registerSessionRoutes({
    router,
    docs,
    auth: options.auth,
    limits: options.limits,
    service: () => options.service,
    retentionDays: options.retentionDays,
  });
  docs.json();

  router.get("/health", (_req, res) => {
    res.json({ status: "healthy", version: SESSION_SERVICE_VERSION, time: new Date().toISOString() });
  });
  router.get(
    "/readiness",
    readinessHandler({
      checks: [postgresCheck(options.db), redisCheck(options.redis)],
      timeoutMs: options.readinessTimeoutMs,
      logger: options.logger,
    }),
  );
  router.get("/openapi.json", docs.handler());

  const app = createHttpApp({
    logger: options.logger,
    metrics: options.metrics,
    maxBodyBytes: options.maxBodyBytes,
    cors: options.cors,
    routes: (a) => a.use(router),
  });
  return { app, docs };
}
