// `npm start`: the whole system on one machine. Migrates the database, creates the NATS
// streams, starts every service that exists as its own process on its default port, and
// puts the public router (the local stand-in for the Ingress) in front on PUBLIC_PORT.
// Ctrl-C stops the router first, then the services, then exits 0.
import { createLogger, loadConfig } from "@tog/core";
import { migrate } from "@tog/db";
import { runBusSetup, startStack, type Stack } from "@tog/devstack";
import { ensureLocalTokenSecret } from "@tog/edge";
import { startConfigShape } from "./start.config.ts";


const config = loadConfig(startConfigShape, process.env);
const logger = createLogger({ service: "start", level: config.LOG_LEVEL });

let stack: Stack | undefined;
let stopping = false;

async function stop(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, "stopping: router, then services");
  try {
    await stack?.stop(config.SHUTDOWN_TIMEOUT_MS);
    logger.info("stopped");
    process.exit(0);
  } catch (err) {
    logger.error({ err }, "stop failed");
    process.exit(1);
  }
}
process.once("SIGINT", () => void stop("SIGINT"));
process.once("SIGTERM", () => void stop("SIGTERM"));

try {
  const applied = await migrate({ databaseUrl: config.DATABASE_URL, logger });
  logger.info({ applied: applied.length }, "database migrated");

  // Every service reads its settings from this same environment (the stack sets PORT per service).
  // Without AUTH_TOKEN_SECRET every service shares this installation's generated secret
  // (.local/auth-token-secret), so authentication can be turned on without a published value.
  const env = {
    ...process.env,
    NODE_ENV: config.NODE_ENV,
    LOG_LEVEL: config.LOG_LEVEL,
    AUTH_TOKEN_SECRET: config.AUTH_TOKEN_SECRET ?? ensureLocalTokenSecret(),
  };
  if (await runBusSetup(env)) logger.info({ prefix: config.NATS_PREFIX }, "nats streams ready");
  else logger.warn("bus setup CLI not found; skipping NATS stream creation");

  stack = await startStack({
    env,
    ports: "default",
    publicPort: config.PUBLIC_PORT,
    publicHost: config.PUBLIC_HOST,
    // Service logs go straight to the terminal (one JSON line each, with its `service`), not
    // through this process, which also runs the public router.
    logs: "inherit",
    readyTimeoutMs: config.START_READY_TIMEOUT_MS,
    onRouterError: (err, info) => logger.warn({ err: err.message, ...info }, "upstream unavailable"),
  });
  if (stopping) {
    await stack.stop(config.SHUTDOWN_TIMEOUT_MS);
    process.exit(0);
  }
  const running = stack.services.map((s) => `${s.name}:${s.port ?? "-"}`);
  logger.info({ services: running, skipped: stack.skipped }, "all services ready");

  for (const service of stack.services) {
    void service.exited.then((info) => {
      if (!stopping) logger.error({ service: service.name, ...info }, "service exited unexpectedly");
    });
  }
  const port = stack.router.port;
  process.stdout.write(
    [
      "",
      `  API:            http://localhost:${port}/api/v1`,
      `  OpenAPI:        http://localhost:${port}/api/v1/openapi.json`,
      stack.catalogUrl ? `  Model catalog:  ${stack.catalogUrl.replace("127.0.0.1", "localhost")}` : undefined,
      "  Ctrl-C stops everything.",
      "",
    ]
      .filter((l) => l !== undefined)
      .join("\n") + "\n",
  );
} catch (err) {
  logger.fatal({ err }, "start failed");
  await stack?.stop(5_000).catch(() => undefined);
  process.exit(1);
}
