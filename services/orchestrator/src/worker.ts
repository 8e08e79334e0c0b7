// Task worker: pulls runs from the RUNS work queue and executes them. Run as many worker
// processes as the load needs; each takes WORKER_CONCURRENCY runs at a time.
import { bootService, startFailureFields, startFailureMessage, isAppError, loadConfig } from "@tog/core";
import { createMetrics, startServiceOps } from "@tog/ops";
import { createDbClient, createDbPool, pingDb } from "@tog/db";
import { connectBus } from "@tog/bus";
import { loadCatalog, providerKeysShape } from "@tog/catalog";
import { loadWorkerConfig } from "./config.ts";
import { registerQueueMetrics } from "./metrics.ts";
import { startWorkerRuntime } from "./worker-runtime.ts";

const SERVICE = "worker";

const { config, logger, lifecycle, waitFor } = bootService(SERVICE, loadWorkerConfig);
const metrics = createMetrics({ service: SERVICE });

try {
  const catalog = loadCatalog(config.MODELS_CONFIG_PATH);
  catalog.validateSelection({
    complexityModelId: config.COMPLEXITY_MODEL_ID,
    decompositionModelId: config.DECOMPOSITION_MODEL_ID,
    defaultTier: config.DEFAULT_MODEL_TIER,
  });
  const apiKeys = loadConfig(providerKeysShape(catalog), process.env) as Record<string, string | undefined>;
  const pool = createDbPool({ databaseUrl: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX });
  const db = createDbClient({ databaseUrl: config.DATABASE_URL, pool });
  lifecycle.on("clients", "postgres", async () => {
    await db.$disconnect();
    await pool.end();
  });
  await waitFor({ name: "PostgreSQL", url: config.DATABASE_URL, variable: "DATABASE_URL" }, () => pingDb(db));
  const bus = await waitFor({ name: "NATS", url: config.NATS_URL, variable: "NATS_URL" }, () =>
    connectBus({ url: config.NATS_URL, name: SERVICE, prefix: config.NATS_PREFIX, logger }),
  );
  lifecycle.on("clients", "nats", () => bus.close());

  registerQueueMetrics(metrics, bus);
  metrics.dependency("postgres", () => pingDb(db));
  metrics.dependency("nats", () => bus.ping(1_000));
  await startServiceOps({
    metrics,
    port: config.METRICS_PORT,
    host: config.METRICS_HOST,
    lifecycle,
    logger,
    health: async () => bus.ping(1_000).then(() => true),
  });

  const worker = await startWorkerRuntime({ config, apiKeys, catalog, bus, db, pool, metrics, logger });
  lifecycle.on("intake", "runs", () => worker.stop());
} catch (err) {
  logger.fatal(
    { ...startFailureFields(err), code: isAppError(err) ? err.code : undefined },
    startFailureMessage(err, "worker failed to start"),
  );
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
