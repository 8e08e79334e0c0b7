import { waitForDependency, type Dependency } from "./dependency.ts";
import { Lifecycle } from "./lifecycle.ts";
import { createLogger, type Logger } from "./logger.ts";
import { initTelemetry, type Telemetry, type TracesSampler } from "./telemetry.ts";

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

interface BaseConfig {
  LOG_LEVEL: string;
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_TRACES_EXPORTER?: "otlp" | "none";
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_RESOURCE_ATTRIBUTES?: string | undefined;
  OTEL_TRACES_SAMPLER?: TracesSampler;
  OTEL_TRACES_SAMPLER_ARG?: number;
  SHUTDOWN_TIMEOUT_MS: number;
  DEPENDENCY_WAIT_SECONDS: number;
}

export function bootService<C extends BaseConfig>(service: string, load: (env: NodeJS.ProcessEnv) => C): BootedService<C> {
  let config: C;
  try {
    config = load(process.env);
  } catch (err) {
    process.stderr.write(`${service}: ${(err as Error).message}\n`);
    process.exit(1);
  }
  const telemetry = initTelemetry({
    serviceName: service,
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    exporter: config.OTEL_TRACES_EXPORTER,
    serviceNameOverride: config.OTEL_SERVICE_NAME,
    resourceAttributes: config.OTEL_RESOURCE_ATTRIBUTES,
    sampler: config.OTEL_TRACES_SAMPLER,
    samplerArg: config.OTEL_TRACES_SAMPLER_ARG,
  });
  const logger = createLogger({ service, level: config.LOG_LEVEL as Parameters<typeof createLogger>[0]["level"] });
  const lifecycle = new Lifecycle({ logger, timeoutMs: config.SHUTDOWN_TIMEOUT_MS }).handleSignals();
  lifecycle.on("clients", "telemetry", () => telemetry.shutdown());
  const waitFor = <T,>(dependency: Dependency, attempt: () => Promise<T>) =>
    waitForDependency(dependency, attempt, { logger, timeoutMs: config.DEPENDENCY_WAIT_SECONDS * 1000 });
  return { config, logger, telemetry, lifecycle, waitFor };
}
