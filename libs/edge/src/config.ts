import { envInt, envList, type ConfigShape } from "@tog/core";

/** Variables of the shared HTTP edge (rate limits, CORS, body size, idempotency). */
export const edgeConfigShape = {
  RATE_LIMIT_RPM: envInt(60, 1).describe(
    "Requests per minute allowed per API key (per user when auth is off); routes may raise it (GET /tasks: 100).",
  ),
  RATE_LIMIT_BURST: envInt(20, 1).describe("Requests per second allowed per API key across all routes (burst limit)."),
  RATE_LIMIT_LEASE_MAX: envInt(64, 1).describe(
    "Most requests of one caller an instance counts per Redis round trip, for limits of 200 or more per window (at most 1 % of the limit); 1 counts each request in Redis.",
  ),
  CORS_ALLOWED_ORIGINS: envList([]).describe(
    "Comma-separated origins allowed by CORS when NODE_ENV=production (development answers `*`).",
  ),
  MAX_BODY_BYTES: envInt(1_048_576, 1).describe("Largest accepted JSON request body in bytes; larger → 413."),
  IDEMPOTENCY_TTL_SECONDS: envInt(86_400, 1).describe(
    "How long a 2xx response is replayed for a repeated Idempotency-Key.",
  ),
} satisfies ConfigShape;
