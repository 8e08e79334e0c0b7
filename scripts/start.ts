// `npm start`: the whole system on one machine. Waits for PostgreSQL and NATS (naming each
// unreachable one, its URL and variable), migrates the database, creates the NATS streams,
// starts every service that exists as its own process on its default port, and puts the public
// router (the local stand-in for the Ingress) in front on PUBLIC_PORT. On a terminal the logs
// are readable (pino-pretty), otherwise JSON lines. Ctrl-C stops the router first, then the
// services, then exits 0.
import { createLogger, loadConfig, startFailureFields, startFailureMessage, waitForDependency } from "@tog/core";
import { connectBus } from "@tog/bus";
import { createDbPool, migrate } from "@tog/db";
import {
  chooseLogFormat,
  formatBanner,
  OPS_PORT_LOG,
  prettyLogFormatter,
  prettyLogStream,
  runBusSetup,
  startStack,
  workerLayout,
  type Stack,
} from "@tog/devstack";
import { startConfigShape } from "./start.config.ts";
import { servicesEnv } from "./start-env.ts";

const config = loadConfig(startConfigShape, process.env);
const format = chooseLogFormat(config.START_LOG_FORMAT, process.stdout.isTTY);
const colorize = format === "pretty" && process.stdout.isTTY === true;
const logger = createLogger({
  service: "start",
  level: config.LOG_LEVEL,
  destination: format === "pretty" ? prettyLogStream({ colorize }) : undefined,
});
const wait = { logger, timeoutMs: config.DEPENDENCY_WAIT_SECONDS * 1000 };

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
  const pool = createDbPool({ databaseUrl: config.DATABASE_URL, poolMax: 1 });
  await waitForDependency(
    { name: "PostgreSQL", url: config.DATABASE_URL, variable: "DATABASE_URL" },
    () => pool.query("SELECT 1"),
    wait,
  ).finally(() => pool.end());
  const applied = await migrate({ databaseUrl: config.DATABASE_URL, logger });
  logger.info({ applied: applied.length }, "database migrated");

  const probe = await waitForDependency(
    { name: "NATS", url: config.NATS_URL, variable: "NATS_URL" },
    () =>
      connectBus({
        url: config.NATS_URL,
        name: "start",
        prefix: config.NATS_PREFIX,
        logger: createLogger({ service: "start", level: "silent" }),
      }),
    wait,
  );
  await probe.close();

  // Every service reads its settings from this same environment (the stack sets PORT per service).
  const env = servicesEnv(process.env, config);
  if (await runBusSetup(env)) logger.info({ prefix: config.NATS_PREFIX }, "nats streams ready");
  else logger.warn("bus setup CLI not found; skipping NATS stream creation");

  stack = await startStack({
    env,
    ...workerLayout(config.START_WORKER_PROCESSES),
    ports: "default",
    publicPort: config.PUBLIC_PORT,
    publicHost: config.PUBLIC_HOST,
    logs: "echo",
    echoFormat: format === "pretty" ? prettyLogFormatter({ colorize }) : undefined,
    readyTimeoutMs: config.START_READY_TIMEOUT_MS,
    onRouterError: (err, info) => logger.warn({ err: err.message, ...info }, "upstream unavailable"),
    router: config.PUBLIC_ROUTER,
    onRouterLog: (line) => logger.warn({ router: "nginx" }, line),
  });
  if (stopping) {
    await stack.stop(config.SHUTDOWN_TIMEOUT_MS);
    process.exit(0);
  }
  // Workers have no port to probe: their ops port is known once they log it.
  await Promise.all(
    stack.services.map((s) =>
      s.waitForLog((r) => r.msg === OPS_PORT_LOG, config.START_READY_TIMEOUT_MS).catch(() => undefined),
    ),
  );
  const running = stack.services.map((s) => `${s.name}:${s.port ?? "-"}`);
  logger.info({ services: running, skipped: stack.skipped, router: stack.routerKind }, "all services ready");

  for (const service of stack.services) {
    void service.exited.then((info) => {
      if (!stopping) logger.error({ service: service.name, ...info }, "service exited unexpectedly");
    });
  }
  process.stdout.write(
    formatBanner({
      apiBaseUrl: `http://localhost:${stack.router.port}/api/v1`,
      catalogUrl: stack.catalogUrl,
      consoleUrl: stack.service("console") ? `http://localhost:${stack.router.port}/console/` : undefined,
      services: stack.services.map((s) => ({ name: s.name, url: s.url, metricsUrl: s.metricsUrl })),
    }),
  );
} catch (err) {
  logger.fatal(startFailureFields(err), startFailureMessage(err, "start failed"));
  await stack?.stop(5_000).catch(() => undefined);
  process.exit(1);
}
