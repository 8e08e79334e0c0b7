import type { Request, Response, Router } from "express";
import { z } from "zod";
import type { Logger } from "@tog/core";
import type { ApiDocs } from "@tog/edge";
import { runReadiness, type ReadinessCheck } from "./readiness.ts";

export interface HealthRoutesOptions {
  docs: ApiDocs;
  logger: Logger;
  version: string;
  checks: readonly ReadinessCheck[];
  readinessTimeoutMs: number;
}

const HealthSchema = z
  .object({
    status: z.literal("healthy"),
    version: z.string().openapi({ example: "0.1.0" }),
    time: z.string().openapi({ format: "date-time", example: "2026-01-01T00:00:00.000Z" }),
  })
  .openapi("Health");

const ChecksSchema = z
  .record(z.string(), z.string())
  .openapi({ description: 'Per dependency: "ok", "timed out after <n> ms" or "unavailable" (details in the log).', example: { postgres: "ok", redis: "ok", nats: "ok" } });

const ReadySchema = z.object({ status: z.literal("ready"), checks: ChecksSchema }).openapi("Ready");

const NotReadySchema = z
  .object({
    status: z.literal("not ready"),
    error: z.string().openapi({ example: "Not ready: redis" }),
    checks: ChecksSchema,
  })
  .openapi("NotReady");

/**
 * Probes under /api/v1, without authentication (contract §4.17, §5 rule 6), and the same two at
 * the server root (`/health`, `/readiness`), where the reference's clients and most probes look
 * (docs/decisions.md "Probes at the root").
 */
export function registerHealthRoutes(router: Router, options: HealthRoutesOptions): void {
  const { docs, logger, version, checks, readinessTimeoutMs } = options;

  const health = (_req: Request, res: Response) => {
    res.json({ status: "healthy", version, time: new Date().toISOString() } satisfies z.input<typeof HealthSchema>);
  };
  const readiness = async (_req: Request, res: Response) => {
    const report = await runReadiness(checks, readinessTimeoutMs);
    res.setHeader("Cache-Control", "no-store");
    if (report.ready) {
      res.json({ status: "ready", checks: report.checks } satisfies z.input<typeof ReadySchema>);
    } else {
      for (const [check, err] of Object.entries(report.errors)) logger.warn({ err, check }, "readiness check failed");
      res.status(503).json({
        status: "not ready",
        error: `Not ready: ${report.failed.join(", ")}`,
        checks: report.checks,
      } satisfies z.input<typeof NotReadySchema>);
    }
  };

  for (const prefix of ["/api/v1", ""] as const) {
    const root = prefix === "";
    docs.route(
      router,
      {
        method: "get",
        path: `${prefix}/health`,
        summary: root ? "Liveness probe (server root)" : "Liveness probe",
        ...(root ? { description: "Same as GET /api/v1/health, at the server root." } : {}),
        tags: ["Health"],
        operationId: root ? "getRootHealth" : "getHealth",
        auth: "none",
        responses: { 200: { description: "The process is up.", schema: HealthSchema } },
      },
      health,
    );
    docs.route(
      router,
      {
        method: "get",
        path: `${prefix}/readiness`,
        summary: root ? "Readiness probe (server root)" : "Readiness probe",
        description: `${root ? "Same as GET /api/v1/readiness, at the server root. " : ""}Checks PostgreSQL, Redis, NATS and the orchestrator (gRPC ping) in parallel, all within READINESS_TIMEOUT_MS (default 2000 ms).`,
        tags: ["Health"],
        operationId: root ? "getRootReadiness" : "getReadiness",
        auth: "none",
        responses: {
          200: { description: "Every dependency answered.", schema: ReadySchema },
          503: { description: "At least one dependency failed; `checks` names why.", schema: NotReadySchema },
        },
      },
      readiness,
    );
  }

  docs.route(
    router,
    {
      method: "get",
      path: "/api/v1/openapi.json",
      summary: "This OpenAPI 3.0 document",
      tags: ["Health"],
      operationId: "getOpenApi",
      auth: "none",
      responses: { 200: { description: "OpenAPI 3.0 document.", schema: z.record(z.string(), z.unknown()) } },
    },
    docs.handler(),
  );
}
