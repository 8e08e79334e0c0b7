// Model catalog service: GET /providers/models from the static catalog (no provider discovery).
import {
  createLogger,
  initTelemetry,
  isAppError,
  Lifecycle,
  loadConfig,
  logTracing,
  telemetryOptionsOf,
  type Logger,
} from "@tog/core";
import { loadCatalog } from "@tog/catalog";
import { startHttpServer } from "@tog/edge";
import { createMetrics, startOpsServer } from "@tog/ops";
import { createModelCatalogApp } from "./app.ts";
import { modelCatalogConfigShape, providerKeysShape } from "./config.ts";

const SERVICE = "model-catalog";
let logger: Logger | undefined;

try {
  const config = loadConfig(modelCatalogConfigShape, process.env);
  const telemetry = initTelemetry(telemetryOptionsOf(SERVICE, config));
  logger = createLogger({ service: SERVICE, level: config.LOG_LEVEL });
  logTracing(logger, telemetry, config.OTEL_EXPORTER_OTLP_ENDPOINT);

  const catalog = loadCatalog(config.MODELS_CONFIG_PATH);
  const selection = catalog.validateSelection({
    complexityModelId: config.COMPLEXITY_MODEL_ID,
    decompositionModelId: config.DECOMPOSITION_MODEL_ID,
    defaultTier: config.DEFAULT_MODEL_TIER,
  });
  const configuredProviders = catalog.configuredProviders(loadConfig(providerKeysShape(catalog), process.env));

  const metrics = createMetrics({ service: SERVICE });
  const ops = await startOpsServer({ metrics, port: config.METRICS_PORT, host: config.METRICS_HOST });
  logger.info({ port: ops.port }, "ops port (metrics, health) listening");
  const app = createModelCatalogApp({ logger, catalog, configuredProviders, nodeEnv: config.NODE_ENV, metrics });
  const server = await startHttpServer(app, { port: config.PORT, host: config.HOST });

  new Lifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS })
    .on("intake", "http", () => server.close())
    .on("clients", "ops-port", () => ops.close())
    .on("clients", "telemetry", () => telemetry.shutdown())
    .handleSignals();

  logger.info(
    {
      port: server.port,
      catalog: catalog.source,
      models: catalog.models().length,
      providers: [...configuredProviders],
      selection,
    },
    "model catalog listening",
  );
} catch (err) {
  // Start-up failures are configuration mistakes: one clear line, no stack trace.
  const log = logger ?? createLogger({ service: SERVICE });
  const message = err instanceof Error ? err.message : String(err);
  log.fatal(
    { code: isAppError(err) ? err.code : (err as NodeJS.ErrnoException | undefined)?.code },
    `start-up failed: ${message}`,
  );
  process.exit(1);
}
