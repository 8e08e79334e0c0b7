import type { Router } from "express";
import { z } from "zod";
import type { Logger } from "@tog/core";
import type { ApiDocs } from "@tog/edge";

// Probes without authentication: `/health` (what the dev router and Kubernetes liveness use)
// and `/readiness`, each also under /api/v1/stream/ so they are reachable through the Ingress.

export interface ReadinessCheck {
  name: string;
  check(): Promise<unknown>;
}

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
      async (_req, res) => {
        const results = await Promise.allSettled(checks.map((c) => withDeadline(c.check(), timeoutMs)));
        const out: Record<string, string> = {};
        const failed: string[] = [];
        results.forEach((r, i) => {
          const name = checks[i]!.name;
          out[name] = r.status === "fulfilled" ? "ok" : "unavailable";
          if (r.status === "rejected") {
            failed.push(name);
            logger.warn({ err: r.reason, check: name }, "readiness check failed");
          }
        });
        res.setHeader("Cache-Control", "no-store");
        if (failed.length === 0) res.json({ status: "ready", checks: out });
        else res.status(503).json({ status: "not ready", error: `Not ready: ${failed.join(", ")}`, checks: out });
      },
    );
  }
}

async function withDeadline<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([promise, new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms)))]);
  } finally {
    clearTimeout(timer);
  }
}
