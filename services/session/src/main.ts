// Session service: /api/v1/sessions* (list, get, history, turns, rename, delete), its Redis
// cache kept fresh by session change hints on NATS, and the session retention purge.
import { connectBus } from "@tog/bus";
import { bootService, redactUrl, startFailureFields, startFailureMessage } from "@tog/core";
import { createMetrics, startServiceOps } from "@tog/ops";
import { createDbClient, pingDb } from "@tog/db";
import { createRedis, pingRedis } from "@tog/redis";
import { AccessTokens, ApiKeyRepository, createAuth, createApiRateLimiter, startHttpServer } from "@tog/edge";
import { createSessionApp } from "./app.ts";
import { loadSessionConfig } from "./config.ts";
import { startChangeFeed } from "./sessions/change-feed.ts";
import { startSessionRetention } from "./sessions/retention.ts";
import { SessionCache } from "./sessions/session-cache.ts";
import { SessionRepository } from "@tog/task-data";
import { SessionService } from "./sessions/session.service.ts";

const SERVICE = "session";

const { config, logger, lifecycle, waitFor } = bootService(SERVICE, loadSessionConfig);
const metrics = createMetrics({ service: SERVICE });

const db = createDbClient({ databaseUrl: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX });
lifecycle.on("clients", "postgres", () => db.$disconnect());
const redis = createRedis({ url: config.REDIS_URL, keyPrefix: config.REDIS_KEY_PREFIX, connectionName: SERVICE });
// ioredis reconnects by itself; one short line per failure, no stack.
redis.on("error", (err: Error) => logger.warn({ error: err.message, url: redactUrl(config.REDIS_URL) }, "redis error"));
lifecycle.on("clients", "redis", () => redis.quit());

try {
  await waitFor({ name: "PostgreSQL", url: config.DATABASE_URL, variable: "DATABASE_URL" }, () => pingDb(db));
  await waitFor({ name: "Redis", url: config.REDIS_URL, variable: "REDIS_URL" }, () => pingRedis(redis, 2_000));
  const cache = new SessionCache({
    redis,
    ttlSeconds: config.SESSION_CACHE_TTL_SECONDS,
    localBytes: config.SESSION_CACHE_LOCAL_MB * 1_048_576,
    logger,
  });
  if (cache.enabled) {
    // Until it listens, the cache is bypassed (reads go to PostgreSQL).
    const bus = await waitFor({ name: "NATS", url: config.NATS_URL, variable: "NATS_URL" }, () =>
      connectBus({ url: config.NATS_URL, name: SERVICE, prefix: config.NATS_PREFIX, logger }),
    );
    lifecycle.on("clients", "nats", () => bus.close());
    const feed = startChangeFeed({
      bus,
      logger,
      onChange: (sessionIds) => void cache.invalidate(...sessionIds),
      onUp: () => cache.feedUp(),
      onDown: () => cache.feedDown(),
    });
    lifecycle.on("drain", "change-feed", () => feed.stop());
  }
  const service = new SessionService({ repository: new SessionRepository({ db }), cache });
  const retention = startSessionRetention({
    db,
    logger,
    retentionDays: config.SESSION_RETENTION_DAYS,
    intervalMs: config.SESSION_RETENTION_INTERVAL_SECONDS * 1_000,
    onPurged: async (ids) => {
      for (const id of ids) await cache.invalidate(id);
    },
  });
  lifecycle.on("drain", "retention", () => retention.stop());

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
  const limits = createApiRateLimiter({ redis, settings: config, logger });

  metrics.dependency("postgres", () => pingDb(db));
  metrics.dependency("redis", () => redis.ping());
  await startServiceOps({ metrics, port: config.METRICS_PORT, host: config.METRICS_HOST, lifecycle, logger });

  const { app } = createSessionApp({
    logger,
    metrics,
    auth,
    limits,
    cors: {
      mode: config.NODE_ENV === "production" ? "production" : "development",
      allowedOrigins: config.CORS_ALLOWED_ORIGINS,
    },
    maxBodyBytes: config.MAX_BODY_BYTES,
    service,
    retentionDays: config.SESSION_RETENTION_DAYS,
    db,
    redis,
    readinessTimeoutMs: config.READINESS_TIMEOUT_MS,
  });
  const server = await startHttpServer(app, { port: config.PORT, host: config.HOST });
  lifecycle.on("intake", "http", () => server.close());
  logger.info(
    { port: server.port, host: config.HOST, cacheTtlSeconds: config.SESSION_CACHE_TTL_SECONDS },
    "session service listening",
  );
} catch (err) {
  logger.fatal(startFailureFields(err), startFailureMessage(err, "session service failed to start"));
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
