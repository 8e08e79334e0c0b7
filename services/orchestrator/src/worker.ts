// Task worker: pulls runs from the RUNS work queue and executes them. Run as many worker
// processes as the load needs; each takes WORKER_CONCURRENCY runs at a time.
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import { bootService, startFailureFields, startFailureMessage, isAppError, loadConfig } from "@tog/core";
import { createMetrics, startServiceOps } from "@tog/ops";
import { createDbClient, createDbPool, pingDb } from "@tog/db";
import { connectBus } from "@tog/bus";
import { loadCatalog, providerKeysShape } from "@tog/catalog";
import { createLlmRouter, llmRouterSettings } from "@tog/providers";
import { builtinTools, createToolRegistry } from "@tog/tools";
import { loadWorkerConfig } from "./config.ts";
import { taskFlow } from "./flows/index.ts";
import { ApprovalRepository } from "./runtime/approval.repository.ts";
import { RunRepository } from "./runtime/run.repository.ts";
import { startRunWorker, type RunWorker } from "./runtime/run-worker.ts";
import { registerQueueMetrics, workerMetrics } from "./metrics.ts";
import { createSignalListener } from "./runtime/signal-listener.ts";
import { budgetedRouter, SessionBudgets } from "./sessions/session-budget.ts";
import { contextWindowOf, sessionContextLoader } from "./sessions/session-context.ts";
import { SessionMemory } from "./sessions/session-memory.ts";

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
  const llm = createLlmRouter({ catalog, apiKeys, logger, ...llmRouterSettings(config) });
  const tools = createToolRegistry(builtinTools({ httpFetch: { allowedHosts: config.TOOL_HTTP_FETCH_ALLOWED_HOSTS } }));

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

  let worker: RunWorker | undefined;
  const series = workerMetrics(metrics, () => worker?.active ?? 0);
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

  const signals = createSignalListener(bus);
  const workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const budgets = new SessionBudgets({ pool });
  const memory = new SessionMemory({ pool, contextWindow: contextWindowOf(llm, catalog), logger });
  worker = await startRunWorker({
    bus,
    onRunEnd: series.onRunEnd,
    concurrency: config.WORKER_CONCURRENCY,
    ackWaitMs: config.RUN_ACK_WAIT_SECONDS * 1_000,
    logger,
    runner: {
      bus,
      signals,
      runs: new RunRepository({ db, pool }),
      approvals: new ApprovalRepository({ db }),
      llm,
      tools,
      catalog,
      settings: {
        approvalThreshold: config.TOOL_APPROVAL_THRESHOLD,
        approvalTimeoutSeconds: config.APPROVAL_TIMEOUT_SECONDS,
        maxToolIterations: config.MAX_TOOL_ITERATIONS,
        llmMaxRetries: config.LLM_MAX_RETRIES,
      },
      task: taskFlow,
      logger,
      workerId,
      leaseMs: config.RUN_LEASE_MS,
      timeoutSeconds: config.AGENT_TIMEOUT_SECONDS,
      loadSessionHistory: sessionContextLoader({ memory, budgets }),
      routerFor: (task, router) => budgetedRouter(router, budgets, task),
      onEventPublished: series.onEventPublished,
      onTaskFinished: series.onTaskFinished,
      eventsMaxAgeMs: config.EVENTS_MAX_AGE_SECONDS * 1_000,
      eventMessages: config.EVENT_MESSAGES,
    },
  });
  const running = worker;
  lifecycle.on("intake", "runs", () => running.stop());
  logger.info(
    { workerId, concurrency: config.WORKER_CONCURRENCY, offlineOnly: llm.offlineOnly },
    "worker pulling runs",
  );
} catch (err) {
  logger.fatal(
    { ...startFailureFields(err), code: isAppError(err) ? err.code : undefined },
    startFailureMessage(err, "worker failed to start"),
  );
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
