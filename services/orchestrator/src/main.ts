// Orchestrator: the gRPC API the gateway calls, the event persister and the retention purge.
// Tasks run in worker processes (worker.ts), or with ORCHESTRATOR_WORKER=on in this one too.
import { bootService, startFailureFields, startFailureMessage, isAppError, loadConfig } from "@tog/core";
import { createMetrics, startServiceOps } from "@tog/ops";
import { createDbClient, createDbPool, pingDb } from "@tog/db";
import { connectBus, ensureConsumers, eventPersisterConsumer, topologyOptionsOf } from "@tog/bus";
import { loadCatalog, providerKeysShape } from "@tog/catalog";
import { createLlmRouter } from "@tog/providers";
import { serverCredentialsOf, startOrchestratorServer } from "@tog/proto";
import { builtinTools, createToolRegistry } from "@tog/tools";
import { loadOrchestratorConfig } from "./config.ts";
import { buildTimeline, createEventHistoryRepository, startEventPersister, startRetentionJob } from "./events/index.ts";
import { validateTaskSpec } from "./flows/index.ts";
import { QueueBreaker } from "./tasks/queue-breaker.ts";
import { TaskService } from "./tasks/task.service.ts";
import { orchestratorMetrics, registerQueueMetrics } from "./metrics.ts";
import { startWorkerRuntime } from "./worker-runtime.ts";
import { LocalSubmits } from "./runtime/local-submits.ts";

const SERVICE = "orchestrator";

const { config, logger, lifecycle, waitFor } = bootService(SERVICE, loadOrchestratorConfig);
const metrics = createMetrics({ service: SERVICE });

try {
  const catalog = loadCatalog(config.MODELS_CONFIG_PATH);
  const selection = catalog.validateSelection({
    complexityModelId: config.COMPLEXITY_MODEL_ID,
    decompositionModelId: config.DECOMPOSITION_MODEL_ID,
    defaultTier: config.DEFAULT_MODEL_TIER,
  });
  // Only to reject unusable model/provider overrides at submit (400), with the workers' keys.
  const apiKeys = loadConfig(providerKeysShape(catalog), process.env) as Record<string, string | undefined>;
  const llm = createLlmRouter({ catalog, apiKeys, logger });
  const tools = createToolRegistry(builtinTools({ httpFetch: { allowedHosts: config.TOOL_HTTP_FETCH_ALLOWED_HOSTS } }));
  /** A pool and its Prisma client, closed with the other clients at shutdown. */
  const openPostgres = (hook: string) => {
    const pool = createDbPool({ databaseUrl: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX });
    const db = createDbClient({ databaseUrl: config.DATABASE_URL, pool });
    lifecycle.on("clients", hook, async () => {
      await db.$disconnect();
      await pool.end();
    });
    return { pool, db };
  };
  const { pool, db } = openPostgres("postgres");
  await waitFor({ name: "PostgreSQL", url: config.DATABASE_URL, variable: "DATABASE_URL" }, () => pingDb(db));
  const bus = await waitFor({ name: "NATS", url: config.NATS_URL, variable: "NATS_URL" }, () =>
    connectBus({ url: config.NATS_URL, name: SERVICE, prefix: config.NATS_PREFIX, logger }),
  );
  lifecycle.on("clients", "nats", () => bus.close());

  const series = orchestratorMetrics(metrics);
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

  const history = createEventHistoryRepository({ db });
  // With a worker in this process, its claims wait for this process's open submits.
  const localSubmits = config.ORCHESTRATOR_WORKER === "on" ? new LocalSubmits() : undefined;
  const service = new TaskService({
    db,
    pool,
    bus,
    logger,
    sessionTokenBudget: config.SESSION_TOKEN_BUDGET,
    defaultModelTier: selection.defaultTier,
    validateSpec: (spec) => validateTaskSpec(spec, { catalog, llm, tools }),
    listEvents: (q) => history.listEvents(q),
    lastEvent: async (taskId) => (await history.readLast(taskId))?.json ?? null,
    buildTimeline: (q) => buildTimeline({ db, ...q }),
    onSubmitted: series.onSubmitted,
    queueBreaker: new QueueBreaker({ ping: (timeoutMs) => bus.ping(timeoutMs), logger }),
    localSubmits,
  });

  if (config.EVENT_PERSISTER === "on") {
    await ensureConsumers(bus, [eventPersisterConsumer(topologyOptionsOf(config))]);
    const persister = startEventPersister({
      bus,
      pool,
      logger,
      batchSize: config.EVENT_PERSIST_BATCH,
      metrics: series.persister,
    });
    lifecycle.on("drain", "event-persister", () => persister.stop());
  }
  const retention = startRetentionJob({
    db,
    logger,
    eventRetentionDays: config.EVENT_RETENTION_DAYS,
    intervalMs: config.EVENT_RETENTION_INTERVAL_SECONDS * 1_000,
  });
  lifecycle.on("drain", "retention", () => retention.stop());

  const shedCalls = metrics.counter(
    "tog_grpc_shed_total",
    "gRPC calls refused at once beyond ORCHESTRATOR_MAX_IN_FLIGHT.",
    ["method"],
  );
  const calls = metrics.counter(
    "tog_grpc_calls_total",
    "gRPC calls received, by method (SubmitTasks: several submits in one call).",
    ["method"],
  );
  const server = await startOrchestratorServer({
    impl: service,
    host: config.HOST,
    port: config.PORT,
    logger,
    credentials: serverCredentialsOf(config),
    maxInFlight: config.ORCHESTRATOR_MAX_IN_FLIGHT,
    onShed: (method) => shedCalls.inc({ method }),
    onCall: (method) => calls.inc({ method }),
  });
  lifecycle.on("intake", "grpc", () => server.tryShutdown());
  logger.info({ port: server.port }, "orchestrator listening");

  if (config.ORCHESTRATOR_WORKER === "on") {
    // Its own pool: claims, checkpoints and lease renewals never wait behind submits.
    const worker = await startWorkerRuntime({
      config,
      apiKeys,
      catalog,
      bus,
      ...openPostgres("postgres (worker)"),
      metrics,
      logger,
      localSubmits,
    });
    lifecycle.on("intake", "runs", () => worker.stop());
  }
} catch (err) {
  logger.fatal(
    { ...startFailureFields(err), code: isAppError(err) ? err.code : undefined },
    startFailureMessage(err, "orchestrator failed to start"),
  );
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
