import { redactUrl, waitForDependency, type Dependency } from "./dependency.ts";
import { Lifecycle } from "./lifecycle.ts";
import { createLogger, type Logger } from "./logger.ts";
import { initTelemetry, telemetryOptionsOf, type Telemetry, type TelemetryConfig } from "./telemetry.ts";

// The first lines of every service's main.ts: configuration (a bad one ends the process with one
// line on stderr and exit code 1, before anything starts), telemetry, the logger and graceful
// shutdown on SIGTERM/SIGINT (intake → drain → clients; telemetry is flushed last).

export interface BootedService<C> {
  config: C;
  logger: Logger;
  telemetry: Telemetry;
  lifecycle: Lifecycle;
  /** Runs `attempt` until the dependency answers, for DEPENDENCY_WAIT_SECONDS (libs/core/src/dependency.ts). */
  waitFor<T>(dependency: Dependency, attempt: () => Promise<T>): Promise<T>;
}

interface BaseConfig extends TelemetryConfig {
  LOG_LEVEL: string;
  SHUTDOWN_TIMEOUT_MS: number;
  DEPENDENCY_WAIT_SECONDS: number;
}

export function bootService<C extends BaseConfig>(
  service: string,
  load: (env: NodeJS.ProcessEnv) => C,
): BootedService<C> {
  let config: C;
  try {
    config = load(process.env);
  } catch (err) {
    process.stderr.write(`${service}: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const telemetry = initTelemetry(telemetryOptionsOf(service, config));
  const logger = createLogger({ service, level: config.LOG_LEVEL as Parameters<typeof createLogger>[0]["level"] });
  logTracing(logger, telemetry, config.OTEL_EXPORTER_OTLP_ENDPOINT);
  const lifecycle = new Lifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }).handleSignals();
  lifecycle.on("clients", "telemetry", () => telemetry.shutdown());
  const waitFor = <T>(dependency: Dependency, attempt: () => Promise<T>) =>
    waitForDependency(dependency, attempt, { logger, timeoutMs: config.DEPENDENCY_WAIT_SECONDS * 1000 });
  return { config, logger, telemetry, lifecycle, waitFor };
}

/** One line at start saying where spans go, and a warning when export is on without the preload. */
export function logTracing(logger: Logger, telemetry: Telemetry, endpoint: string | undefined): void {
  if (!telemetry.exported) return;
  if (telemetry.instrumentations.length > 0) {
    logger.info(
      { endpoint: endpoint && redactUrl(endpoint), instrumentations: telemetry.instrumentations },
      "tracing: exporting spans over OTLP",
    );
  } else {
    logger.warn(
      { endpoint: endpoint && redactUrl(endpoint) },
      "tracing: exporting spans without the telemetry preload (node --import @tog/core/preload): no spans of express, pg or ioredis calls",
    );
  }
}
