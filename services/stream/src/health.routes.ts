import type { Router } from "express";
import { z } from "zod";
import type { Logger } from "@tog/core";
import type { ApiDocs } from "@tog/edge";
import { readinessHandler, type ReadinessCheck } from "@tog/ops";

// Probes without authentication: `/health` (what the dev router and Kubernetes liveness use)
// and `/readiness`, each also under /api/v1/stream/ so they are reachable through the Ingress.

const HealthSchema = z
  .object({ status: z.literal("healthy"), version: z.string(), time: z.string().openapi({ format: "date-time" }) })
  .openapi("StreamHealth");

const ReadinessSchema = z
  .object({
    status: z.enum(["ready", "not ready"]),
    error: z.string().optional(),
    checks: z.record(z.string(), z.string()).openapi({ example: { postgres: "ok", nats: "ok", redis: "ok" } }),
  })
  .openapi("StreamReadiness");

export function registerHealthRoutes(
  router: Router,
  options: { docs: ApiDocs; version: string; checks: ReadinessCheck[]; timeoutMs: number; logger: Logger },
): void {
  const { docs, version, checks, timeoutMs, logger } = options;
  const readiness = readinessHandler({ checks, timeoutMs, logger });
  for (const path of ["/health", "/api/v1/stream/health"]) {
    docs.route(
      router,
      {
        method: "get",
        path,
        summary: "Liveness probe of the stream service",
        tags: ["Health"],
        auth: "none",
        responses: { 200: { description: "The process is up.", schema: HealthSchema } },
      },
      (_req, res) => {
        res.json({ status: "healthy", version, time: new Date().toISOString() });
      },
    );
  }
  for (const path of ["/readiness", "/api/v1/stream/readiness"]) {
    docs.route(
      router,
      {
        method: "get",
        path,
        summary: "Readiness probe of the stream service (PostgreSQL, NATS, Redis)",
        tags: ["Health"],
        auth: "none",
        responses: {
          200: { description: "Every dependency answered.", schema: ReadinessSchema },
          503: { description: "A dependency failed.", schema: ReadinessSchema },
        },
      },
      readiness,
    );
  }
}
