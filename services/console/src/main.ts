// Web console: the single-page app under /console (built by Vite at install), its run-time
// config and probes. Stateless: the page talks to the public API with the user's API key.
import { bootService } from "@tog/core";
import { startHttpServer } from "@tog/edge";
import { createMetrics, startServiceOps } from "@tog/ops";
import { createConsoleApp } from "./app.ts";
import { loadConsoleConfig } from "./config.ts";
import { CONSOLE_VERSION } from "./version.ts";
import { requireWebBuild } from "./web-build.ts";

const SERVICE = "console";

const { config, logger, lifecycle } = bootService(SERVICE, loadConsoleConfig);
const metrics = createMetrics({ service: SERVICE });

try {
  const webDir = requireWebBuild();
  await startServiceOps({ metrics, port: config.METRICS_PORT, host: config.METRICS_HOST, lifecycle, logger });
  const app = createConsoleApp({
    logger,
    metrics,
    webDir,
    apiBaseUrl: config.CONSOLE_API_BASE_URL,
    version: CONSOLE_VERSION,
  });
  const server = await startHttpServer(app, { port: config.PORT, host: config.HOST });
  lifecycle.on("intake", "http", () => server.close());
  logger.info(
    { port: server.port, host: config.HOST, apiBaseUrl: config.CONSOLE_API_BASE_URL },
    "web console listening",
  );
} catch (err) {
  logger.fatal({ err }, "web console failed to start");
  await lifecycle.shutdown().catch(() => undefined);
  process.exit(1);
}
