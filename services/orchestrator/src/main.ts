// Orchestrator: the gRPC API the gateway calls, the event persister and the retention purge.
// Workflows run in worker processes (worker.ts).
import { createLogger, initTelemetry, isAppError, Lifecycle, loadConfig } from "@tog/core";
import { createDbClient } from "@tog/db";
import { connectBus } from "@tog/bus";
import { loadCatalog, providerKeysShape } from "@tog/catalog";
import { createLlmRouter } from "@tog/providers";
import { startOrchestratorServer } from "@tog/proto";
import { builtinTools, createToolRegistry } from "@tog/tools";
import { loadOrchestratorConfig } from "./config.ts";
import { buildTimeline, createEventHistoryRepository, startEventPersister, startRetentionJob } from "./events/index.ts";
import { validateTaskSpec } from "./flows/index.ts";
import { TaskService } from "./tasks/task.service.ts";

const SERVICE = "orchestrator";

const config = (() => {
  try {
    return loadOrchestratorConfig(process.env);
  } catch (err) {
    process.stderr.write(`${SERVICE}: ${(err as Error).message}\n`);
    process.exit(1);
  }
})();
const telemetry = initTelemetry({ serviceName: SERVICE, otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT });
const logger = createLogger({ service: SERVICE, level: config.LOG_LEVEL });
const lifecycle = new Lifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }).handleSignals();

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
  const db = createDbClient({ databaseUrl: config.DATABASE_URL, poolMax: config.DATABASE_POOL_MAX });
  lifecycle.on("clients", "postgres", () => db.$disconnect());
  lifecycle.on("clients", "telemetry", () => telemetry.shutdown());
  const bus = await connectBus({ url: config.NATS_URL, name: SERVICE, prefix: config.NATS_PREFIX, logger });
  lifecycle.on("clients", "nats", () => bus.close());

  const history = createEventHistoryRepository({ db });
  const service = new TaskService({
    db,
    bus,
    logger,
    sessionTokenBudget: config.SESSION_TOKEN_BUDGET,
    defaultModelTier: selection.defaultTier,
    validateSpec: (spec) => validateTaskSpec(spec, { catalog, llm, tools }),
    listEvents: (q) => history.listEvents(q),
    buildTimeline: (q) => buildTimeline({ db, ...q }),
  });

  if (config.EVENT_PERSISTER === "on") {
    const persister = startEventPersister({ bus, db, logger, batchSize: config.EVENT_PERSIST_BATCH });
    lifecycle.on("drain", "event-persister", () => persister.stop());
  }
  const retention = startRetentionJob({
    db,
    logger,
    eventRetentionDays: config.EVENT_RETENTION_DAYS,
    intervalMs: config.EVENT_RETENTION_INTERVAL_SECONDS * 1_000,
  });
  lifecycle.on("drain", "retention", () => retention.stop());

  const server = await startOrchestratorServer({ impl: service, host: config.HOST, port: config.PORT, logger });
  lifecycle.on("intake", "grpc", () => server.tryShutdown());
  logger.info({ port: server.port }, "orchestrator listening");
} catch (err) {
  logger.fatal({ err, code: isAppError(err) ? err.code : undefined }, "orchestrator failed to start");
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
