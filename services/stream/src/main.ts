// Stream fan-out: SSE and WebSocket streams of task events, scaled on its own.
import { bootService, redactUrl, startFailureFields, startFailureMessage } from "@tog/core";
import { createMetrics, natsCheck, postgresCheck, redisCheck, startServiceOps } from "@tog/ops";
import { createDbClient, pingDb } from "@tog/db";
import { connectBus } from "@tog/bus";
import { createEventHistoryRepository } from "@tog/event-log";
import { createRedis, pingRedis } from "@tog/redis";
import { AccessTokens, ApiKeyRepository, createAuth, createRateLimiter, startHttpServer } from "@tog/edge";
import { createStreamApp } from "./app.ts";
import { loadStreamConfig } from "./config.ts";
import { HubRegistry } from "./hub/hub-registry.ts";
import { createTaskOwners } from "./ownership.ts";
import { createEventStore } from "./store/event-store.ts";
import { JetStreamEvents } from "./store/jetstream-events.ts";
import { STREAM_VERSION } from "./version.ts";

const SERVICE = "stream";

const { config, logger, lifecycle, waitFor } = bootService(SERVICE, loadStreamConfig);
const metrics = createMetrics({ service: SERVICE });
const slowCloses = metrics.counter(
  "tog_stream_slow_consumer_closes_total",
  "SSE and WebSocket clients closed for being too slow (unsent data over STREAM_MAX_BUFFER_BYTES).",
  ["kind"],
);
const delivered = metrics.counter(
  "tog_stream_events_delivered_total",
  "Live events handed to SSE and WebSocket subscribers (one per subscriber).",
);

const db = createDbClient({ databaseUrl: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX });
lifecycle.on("clients", "postgres", () => db.$disconnect());
// Redis holds the stream-open rate-limit counters only (shared by every instance).
const redis = createRedis({ url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX, connectionName: SERVICE });
// ioredis reconnects by itself; one short line per failure, no stack.
redis.on("error", (err: Error) => logger.warn({ error: err.message, url: redactUrl(config.REDIS_URL) }, "redis error"));
lifecycle.on("clients", "redis", () => redis.quit());

try {
  await waitFor({ name: "PostgreSQL", url: config.DATABASE_URL, variable: "DATABASE_URL" }, () => pingDb(db));
  await waitFor({ name: "Redis", url: config.REDIS_URL, variable: "REDIS_URL" }, () => pingRedis(redis, 2_000));
  const bus = await waitFor({ name: "NATS", url: config.NATS_URL, variable: "NATS_URL" }, () =>
    connectBus({ url: config.NATS_URL, name: SERVICE, prefix: config.NATS_PREFIX, logger }),
  );
  lifecycle.on("clients", "nats", () => bus.close());

  const store = createEventStore({
    cache: new JetStreamEvents({ js: bus.js, jsm: bus.jsm, stream: bus.streamName("EVENTS") }),
    log: createEventHistoryRepository({ db }),
    prefix: bus.prefix,
    logger,
  });
  const registry = new HubRegistry({
    nc: bus.nc,
    prefix: bus.prefix,
    store,
    logger,
    cacheSize: config.STREAM_HUB_CACHE_EVENTS,
    readBatch: config.STREAM_REPLAY_BATCH,
    lingerMs: config.STREAM_HUB_LINGER_MS,
    headCheckMs: config.STREAM_HEAD_CHECK_MS,
    onDelivered: (n) => delivered.inc(n),
  });
  lifecycle.on("drain", "hubs", () => registry.closeAll());

  if (config.GATEWAY_SKIP_AUTH) {
    logger.warn("authentication is off (GATEWAY_SKIP_AUTH=1): requests without a credential act as the default user");
  }
  const auth = createAuth({
    repository: new ApiKeyRepository({ db, logger, cacheTtlMs: config.AUTH_KEY_CACHE_MS }),
    tokens: new AccessTokens({
      secret: config.AUTH_TOKEN_SECRET,
      previousSecret: config.AUTH_TOKEN_SECRET_PREVIOUS,
      ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS,
    }),
    skipAuth: config.GATEWAY_SKIP_AUTH,
    logger,
  });
  // Stream opens count in their own counters (`rl:stream:…`, own burst), apart from the other
  // endpoints' RATE_LIMIT_RPM: docs/security.md "Rate limits". Redis down: per-instance fallback.
  // Each open is counted in Redis (no leases): opens are rare next to what a stream then costs,
  // and X-RateLimit-Remaining stays exact across the instances.
  const streamLimits = createRateLimiter({
    redis,
    rpm: config.RATE_LIMIT_STREAM_RPM,
    burst: config.RATE_LIMIT_STREAM_BURST,
    maxLease: 1,
    keyPrefix: "rl:stream",
    logger,
  });
  const production = config.NODE_ENV === "production";
  const streams = createStreamApp({
    logger,
    version: STREAM_VERSION,
    auth,
    owners: createTaskOwners({ db }),
    registry,
    rateLimit: streamLimits.forRoute(),
    onSlowClose: (kind) => slowCloses.inc({ kind }),
    settings: {
      keepAliveMs: config.STREAM_KEEPALIVE_MS,
      retryMs: config.STREAM_RETRY_MS,
      maxBufferBytes: config.STREAM_MAX_BUFFER_BYTES,
      wsMaxSubscriptions: config.STREAM_WS_MAX_SUBSCRIPTIONS,
      wsMaxMessagesPerSecond: config.STREAM_WS_MAX_MESSAGES_PER_SECOND,
      allowedOrigins: production ? config.CORS_ALLOWED_ORIGINS : null,
    },
    maxConnections: config.STREAM_MAX_CONNECTIONS,
    cors: { mode: production ? "production" : "development", allowedOrigins: config.CORS_ALLOWED_ORIGINS },
    readinessChecks: [postgresCheck(db), natsCheck(bus), redisCheck(redis)],
  });

  metrics.gauge("tog_stream_connections", "Open stream connections by kind (sse, websocket).", ["kind"], (g) => {
    const stats = streams.stats();
    g.set({ kind: "sse" }, stats.sse);
    g.set({ kind: "websocket" }, stats.websocket);
  });
  metrics.gauge("tog_stream_hubs", "Tasks this instance holds an upstream subscription for.", [], (g) =>
    g.set(streams.stats().hubs),
  );
  metrics.dependency("postgres", () => pingDb(db));
  metrics.dependency("nats", () => bus.ping(1_000));
  metrics.dependency("redis", () => redis.ping());
  await startServiceOps({ metrics, port: config.METRICS_PORT, host: config.METRICS_HOST, lifecycle, logger });

  // startHttpServer hands its first argument to http.createServer; any request listener works.
  const server = await startHttpServer(streams.handler as unknown as Parameters<typeof startHttpServer>[0], {
    port: config.PORT,
    host: config.HOST,
  });
  streams.attach(server.server);
  // Stop accepting, then end every open stream: clients reconnect (with their last id) to
  // another instance; without ending them the server would wait for streams that never end.
  lifecycle.on("intake", "http", async () => {
    const closed = server.close();
    streams.closeStreams();
    await closed;
  });
  logger.info({ port: server.port, host: config.HOST, version: STREAM_VERSION }, "stream service listening");
} catch (err) {
  logger.fatal(startFailureFields(err), startFailureMessage(err, "stream service failed to start"));
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
