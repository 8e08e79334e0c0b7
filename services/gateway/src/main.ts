import { bootService, redactUrl, startFailureFields, startFailureMessage } from "@tog/core";
import { createMetrics, pingCheck, postgresCheck, redisCheck, startServiceOps } from "@tog/ops";
import { createDbClient, pingDb } from "@tog/db";
import { createRedis, pingRedis } from "@tog/redis";
import { PROBE_PREFIXES } from "@tog/api";
import { clientCredentialsOf, createOrchestratorClient } from "@tog/proto";
import {
  AccessTokens,
  ApiKeyRepository,
  createAuth,
  createIdempotency,
  createIdempotencyIdentity,
  createLoadShedder,
  createApiRateLimiter,
  startHttpServer,
  UserRepository,
} from "@tog/edge";
import { loadGatewayConfig } from "./config.ts";
import { createGatewayApp } from "./app.ts";
import { taskRoutes } from "./tasks/task.routes.ts";
import { GATEWAY_VERSION } from "./version.ts";
import { tokenRoutes } from "./token.routes.ts";

const SERVICE = "gateway";

const { config, logger, lifecycle, waitFor } = bootService(SERVICE, loadGatewayConfig);
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

  const users = new UserRepository({ db });
  if (config.GATEWAY_SKIP_AUTH) {
    await users.ensureDefaultUser();
    logger.warn("authentication is off (GATEWAY_SKIP_AUTH=1): requests without a credential act as the default user");
  }
  const tokens = new AccessTokens({
    secret: config.AUTH_TOKEN_SECRET,
    previousSecret: config.AUTH_TOKEN_SECRET_PREVIOUS,
    ttlSeconds: config.AUTH_TOKEN_TTL_SECONDS,
  });
  const auth = createAuth({
    repository: new ApiKeyRepository({ db, logger, cacheTtlMs: config.AUTH_KEY_CACHE_MS }),
    tokens,
    skipAuth: config.GATEWAY_SKIP_AUTH,
    logger,
  });
  const limits = createApiRateLimiter({ redis, settings: config, logger });
  const idempotency = createIdempotency({ redis, ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS, logger });

  const tls = clientCredentialsOf(config);
  const orchestrator = createOrchestratorClient({
    address: config.ORCHESTRATOR_ADDRESS,
    deadlineMs: config.ORCHESTRATOR_DEADLINE_MS,
    submitBatchesInFlight: config.ORCHESTRATOR_SUBMIT_BATCHES,
    logger,
    credentials: tls.credentials,
    channelOptions: tls.channelOptions,
  });
  lifecycle.on("clients", "orchestrator", () => orchestrator.close());

  metrics.dependency("postgres", () => pingDb(db));
  metrics.dependency("redis", () => redis.ping());
  metrics.dependency("orchestrator", () => orchestrator.ping());
  await startServiceOps({ metrics, port: config.METRICS_PORT, host: config.METRICS_HOST, lifecycle, logger });

  const shedCounter = metrics.counter("tog_http_shed_total", "Requests answered 503 at the door, by reason.", [
    "reason",
  ]);
  const probes = new Set(PROBE_PREFIXES.flatMap((p) => [`${p}/health`, `${p}/readiness`]));
  const shedder = createLoadShedder({
    maxInFlight: config.GATEWAY_MAX_IN_FLIGHT,
    maxEventLoopDelayMs: config.GATEWAY_SHED_EVENT_LOOP_DELAY_MS,
    exempt: (path) => probes.has(path),
    onShed: (reason) => shedCounter.inc({ reason }),
  });
  lifecycle.on("clients", "shedder", () => shedder.stop());

  const { app } = createGatewayApp({
    logger,
    metrics,
    shedder,
    version: GATEWAY_VERSION,
    auth,
    limits,
    idempotency,
    tokens,
    modules: [
      tokenRoutes,
      taskRoutes({
        orchestrator,
        // The task row keeps the identity (unique per user) and deduplicates on its own: no Redis
        // round trip on a submit, and submits go on while Redis is down (docs/api.md "Idempotency").
        submitIdempotency: createIdempotencyIdentity({ ttlSeconds: config.IDEMPOTENCY_TTL_SECONDS }),
      }),
    ],
    cors: {
      mode: config.NODE_ENV === "production" ? "production" : "development",
      allowedOrigins: config.CORS_ALLOWED_ORIGINS,
    },
    maxBodyBytes: config.MAX_BODY_BYTES,
    readinessChecks: [postgresCheck(db), redisCheck(redis), pingCheck("orchestrator", orchestrator)],
    readinessTimeoutMs: config.READINESS_TIMEOUT_MS,
  });

  const server = await startHttpServer(app, { port: config.PORT, host: config.HOST });
  lifecycle.on("intake", "http", () => server.close());
  logger.info({ port: server.port, host: config.HOST, version: GATEWAY_VERSION }, "gateway listening");
} catch (err) {
  logger.fatal(startFailureFields(err), startFailureMessage(err, "gateway failed to start"));
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
