import { z } from "zod";
import { baseConfigShape, envInt, loadConfig, type Env } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { busConfigShape } from "@tog/bus";
import { redisConfigShape } from "@tog/redis";
import { opsConfigShape } from "@tog/ops";
import { assertAuthConfig, authConfigShape, edgeConfigShape } from "@tog/edge";

export const streamConfigShape = {
  ...baseConfigShape,
  ...opsConfigShape,
  ...dbConfigShape,
  ...redisConfigShape,
  NATS_URL: busConfigShape.NATS_URL,
  NATS_PREFIX: busConfigShape.NATS_PREFIX,
  ...authConfigShape,
  CORS_ALLOWED_ORIGINS: edgeConfigShape.CORS_ALLOWED_ORIGINS,
  PORT: envInt(8082, 0, 65_535).describe("Stream service HTTP port (SSE and WebSocket)."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Stream service listen address."),
  STREAM_KEEPALIVE_MS: envInt(15_000, 50, 60_000).describe(
    "Interval of the SSE keep-alive comment and of the WebSocket server ping (load balancers cut idle streams at 60 s). " +
      "A WebSocket peer that answered no ping within one interval is dropped.",
  ),
  STREAM_RETRY_MS: envInt(3_000, 0, 600_000).describe(
    "The SSE `retry:` hint: how long EventSource clients wait before reconnecting.",
  ),
  STREAM_MAX_BUFFER_BYTES: envInt(1_048_576, 16_384).describe(
    "Per-connection bound of unsent bytes. A live client that falls further behind is disconnected " +
      "(SSE: the stream ends; WebSocket: close 1013) and resumes from its last event.",
  ),
  STREAM_REPLAY_BATCH: envInt(2_000, 1, 50_000).describe(
    "Events per store read when replaying (JetStream or PostgreSQL).",
  ),
  STREAM_HUB_CACHE_EVENTS: envInt(2_000, 1, 1_000_000).describe(
    "Most recent events of each streamed task kept in memory per instance, so joining and resuming clients need no store read.",
  ),
  STREAM_HUB_LINGER_MS: envInt(10_000, 0, 600_000).describe(
    "How long a task's upstream subscription stays open after its last client left (reconnecting clients find it warm).",
  ),
  STREAM_HEAD_CHECK_MS: envInt(10_000, 100, 600_000).describe(
    "A streamed task without a live event for this long is compared with the real-time cache, so an event lost by core NATS (e.g. during a reconnect) is still delivered.",
  ),
  RATE_LIMIT_STREAM_RPM: envInt(6_000, 1).describe(
    "Stream opens (SSE requests and WebSocket handshakes) allowed per minute per API key (per user when auth is off), counted " +
      "in their own bucket apart from RATE_LIMIT_RPM; more → 429 with Retry-After. High on purpose: resumes must not fail, only a runaway reconnect loop is stopped.",
  ),
  RATE_LIMIT_STREAM_BURST: envInt(500, 1).describe(
    "Stream opens allowed per second per API key (the streams' own burst limit, apart from RATE_LIMIT_BURST).",
  ),
  STREAM_MAX_CONNECTIONS: envInt(50_000, 1).describe("SSE + WebSocket connections one instance accepts; more → 503."),
  STREAM_WS_MAX_SUBSCRIPTIONS: envInt(100, 1, 10_000).describe(
    "Tasks one WebSocket connection may subscribe to at once.",
  ),
  STREAM_WS_MAX_MESSAGES_PER_SECOND: envInt(100, 1, 100_000).describe(
    "Client messages (and pings) one WebSocket connection may send per second; the first one over the rate closes the connection " +
      "with 4429 (the client reconnects and resubscribes with last_event_id).",
  ),
};

export type StreamConfig = z.infer<z.ZodObject<typeof streamConfigShape>>;

export function loadStreamConfig(env: Env): StreamConfig {
  const config = loadConfig(streamConfigShape, env);
  assertAuthConfig(config);
  return config;
}
