import { z } from "zod";
import { ConfigError } from "./errors.ts";

// Every service declares one zod object whose keys are environment variable names and whose
// `.describe()` text documents them. `loadConfig` is the only reader of process.env;
// `describeConfig` feeds the environment table in README.md (`npm run docs:env`).

export type ConfigShape = z.ZodRawShape;
export type Env = Record<string, string | undefined>;

/** "1"/"true"/"yes"/"on" → true, "0"/"false"/"no"/"off" → false. */
export const envBoolean = (fallback: boolean) =>
  z
    .enum(["1", "0", "true", "false", "yes", "no", "on", "off", ""])
    .optional()
    .transform((v) => (v === undefined || v === "" ? fallback : ["1", "true", "yes", "on"].includes(v)));

export const envInt = (fallback: number, min = 0, max = Number.MAX_SAFE_INTEGER) =>
  z.coerce.number().int().min(min).max(max).default(fallback);

export const envNumber = (fallback: number, min = -Infinity, max = Infinity) =>
  z.coerce.number().min(min).max(max).default(fallback);

/** Comma-separated list; empty entries dropped. */
export const envList = (fallback: string[] = []) =>
  z
    .string()
    .optional()
    .transform((v) =>
      v === undefined
        ? fallback
        : v
            .split(",")
            .map((s) => s.trim())
            .filter((s) => s.length > 0),
    );

/** Variables every service reads. */
export const baseConfigShape = {
  NODE_ENV: z
    .enum(["development", "production", "test"])
    .default("development")
    .describe("development | production | test. Production tightens CORS to CORS_ALLOWED_ORIGINS."),
  LOG_LEVEL: z
    .enum(["fatal", "error", "warn", "info", "debug", "trace", "silent"])
    .default("info")
    .describe("pino log level."),
  // Empty counts as unset, so compose can pass `${OTEL_EXPORTER_OTLP_ENDPOINT:-}` through.
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .preprocess((v) => (v === "" ? undefined : v), z.string().url().optional())
    .describe(
      "OTLP/HTTP endpoint (e.g. http://otel-collector:4318). Set: spans are exported and the instrumentations run; unset or empty: trace ids only (docs/architecture.md, Tracing).",
    ),
  OTEL_SDK_DISABLED: envBoolean(false).describe(
    "true: as without an endpoint (no SDK, nothing instrumented or exported; trace ids only).",
  ),
  OTEL_TRACES_EXPORTER: z
    .enum(["otlp", "none"])
    .default("otlp")
    .describe("otlp: export spans to OTEL_EXPORTER_OTLP_ENDPOINT (batched) when it is set; none: never export."),
  OTEL_SERVICE_NAME: z
    .string()
    .optional()
    .describe("service.name of this process's spans (default: the service's own name, e.g. gateway)."),
  OTEL_RESOURCE_ATTRIBUTES: z
    .string()
    .optional()
    .describe(
      "Extra resource attributes of every span, `key=value,key2=value2` (values percent-encoded), e.g. deployment.environment.name=staging.",
    ),
  OTEL_TRACES_SAMPLER: z
    .enum([
      "always_on",
      "always_off",
      "traceidratio",
      "parentbased_always_on",
      "parentbased_always_off",
      "parentbased_traceidratio",
    ])
    .default("parentbased_always_on")
    .describe(
      "Which traces are recorded and exported. Unsampled requests still carry their trace id to logs and events.",
    ),
  OTEL_TRACES_SAMPLER_ARG: envNumber(1, 0, 1).describe("Sampling ratio for traceidratio samplers (0..1)."),
  SHUTDOWN_TIMEOUT_MS: envInt(25_000, 1_000).describe(
    "Longest graceful shutdown before the process exits anyway (keep below the pod's termination grace period).",
  ),
  DEPENDENCY_WAIT_SECONDS: envInt(60, 0).describe(
    "At start, how long to keep retrying an unreachable PostgreSQL, Redis or NATS (each named with its URL and variable in a warning; waits 0.5 s doubling to 5 s) before exiting with code 1.",
  ),
} satisfies ConfigShape;

export function loadConfig<S extends ConfigShape>(shape: S, env: Env = process.env): z.infer<z.ZodObject<S>> {
  const result = z.object(shape).safeParse(env);
  if (!result.success) {
    const lines = result.error.issues.map((i) => `  ${i.path.join(".")}: ${i.message}`);
    throw new ConfigError(`Invalid configuration:\n${lines.join("\n")}`);
  }
  return result.data;
}

export interface ConfigVariable {
  name: string;
  description: string;
  default: string | undefined;
}

/** Name, description and default of each variable in a config shape, for documentation. */
export function describeConfig(shape: ConfigShape): ConfigVariable[] {
  return Object.entries(shape).map(([name, schema]) => {
    const s = schema as z.ZodType;
    const parsed = s.safeParse(undefined);
    const def = parsed.success && parsed.data !== undefined ? JSON.stringify(parsed.data) : undefined;
    return { name, description: s.description ?? "", default: def };
  });
}
