import { z } from "zod";
import { defineRoute } from "@tog/edge";

// The gateway's probes under /api/v1, without authentication (docs/api.md "Health"), the same
// two at the server root (`/health`, `/readiness`), where most probes look (docs/decisions.md
// "Probes at the root"), and this document.

export const HealthSchema = z
  .object({
    status: z.literal("healthy"),
    version: z.string().openapi({ example: "0.1.0" }),
    time: z.string().openapi({ format: "date-time", example: "2026-01-01T00:00:00.000Z" }),
  })
  .openapi("Health");

const ChecksSchema = z.record(z.string(), z.string()).openapi({
  description: 'Per dependency: "ok", "timed out after <n> ms" or "unavailable" (details in the log).',
  example: { postgres: "ok", redis: "ok", nats: "ok" },
});

export const ReadySchema = z.object({ status: z.literal("ready"), checks: ChecksSchema }).openapi("Ready");

export const NotReadySchema = z
  .object({
    status: z.literal("not ready"),
    error: z.string().openapi({ example: "Not ready: redis" }),
    checks: ChecksSchema,
  })
  .openapi("NotReady");

/** `/api/v1` or the server root (""). */
export type ProbePrefix = "/api/v1" | "";

export function healthRoute(prefix: ProbePrefix) {
  const root = prefix === "";
  return defineRoute({
    method: "get",
    path: `${prefix}/health`,
    summary: root ? "Liveness probe (server root)" : "Liveness probe",
    ...(root ? { description: "Same as GET /api/v1/health, at the server root." } : {}),
    tags: ["Health"],
    operationId: root ? "getRootHealth" : "getHealth",
    auth: "none",
    responses: { 200: { description: "The process is up.", schema: HealthSchema } },
  });
}

export function readinessRoute(prefix: ProbePrefix) {
  const root = prefix === "";
  return defineRoute({
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
  });
}

export const openApiRoute = defineRoute({
  method: "get",
  path: "/api/v1/openapi.json",
  summary: "This OpenAPI 3.0 document",
  tags: ["Health"],
  operationId: "getOpenApi",
  auth: "none",
  responses: { 200: { description: "OpenAPI 3.0 document.", schema: z.record(z.string(), z.unknown()) } },
});

export const PROBE_PREFIXES: readonly ProbePrefix[] = ["/api/v1", ""];

/** In the order the document lists them. */
export const HEALTH_ROUTES = [...PROBE_PREFIXES.flatMap((p) => [healthRoute(p), readinessRoute(p)]), openApiRoute];
