import { z } from "zod";
import { opsConfigShape } from "@tog/ops";
import { baseConfigShape, envInt, loadConfig, type ConfigShape, type Env } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { redisConfigShape } from "@tog/redis";
import { busConfigShape } from "@tog/bus";
import { assertAuthConfig, authConfigShape, edgeConfigShape } from "@tog/edge";

/** The session service: `/api/v1/sessions*`, its cache and the session history retention. */
export const sessionConfigShape = {
  ...baseConfigShape,
  ...opsConfigShape,
  ...dbConfigShape,
  ...redisConfigShape,
  NATS_URL: busConfigShape.NATS_URL,
  NATS_PREFIX: busConfigShape.NATS_PREFIX,
  ...edgeConfigShape,
  ...authConfigShape,
  PORT: envInt(8083, 0, 65_535).describe("Session service HTTP port."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Session service listen address."),
  READINESS_TIMEOUT_MS: envInt(2_000, 50, 30_000).describe(
    "Deadline of the session service's readiness checks (PostgreSQL, Redis).",
  ),
  SESSION_CACHE_TTL_SECONDS: envInt(300, 0, 86_400).describe(
    "Lifetime of the Redis cache entries of a session (metadata, history, turn pages); every change drops them earlier. 0 turns the cache off.",
  ),
  SESSION_CACHE_LOCAL_MB: envInt(64, 0, 65_536).describe(
    "Memory (MiB) for this process's own copies of the history and turn-page bodies it served, sent while Redis says they are current (each at most 30 s). 0 keeps none.",
  ),
  SESSION_RETENTION_DAYS: envInt(30, 0, 36_500).describe(
    "A session without activity for this many days is purged with its tasks and their events (deleted sessions too). 0 keeps sessions forever.",
  ),
  SESSION_RETENTION_INTERVAL_SECONDS: envInt(3_600, 1).describe(
    "Seconds between two runs of the session retention purge.",
  ),
} satisfies ConfigShape;

export type SessionConfig = z.infer<z.ZodObject<typeof sessionConfigShape>>;

export function loadSessionConfig(env: Env): SessionConfig {
  const config = loadConfig(sessionConfigShape, env);
  assertAuthConfig(config);
  return config;
}
