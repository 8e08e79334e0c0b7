import type { z } from "zod";
import { baseConfigShape, loadConfig, type Env } from "./config.ts";

// The standard OTEL_* variables, read once by the telemetry preload (before any service code
// loads) and again by every service's own config schema (which includes them). Whether spans are
// exported decides everything else (docs/architecture.md, "Tracing"): exported → the
// OpenTelemetry Node SDK with its instrumentations; not exported → ids only, nothing patched.

export const telemetryConfigShape = {
  OTEL_EXPORTER_OTLP_ENDPOINT: baseConfigShape.OTEL_EXPORTER_OTLP_ENDPOINT,
  OTEL_SDK_DISABLED: baseConfigShape.OTEL_SDK_DISABLED,
  OTEL_TRACES_EXPORTER: baseConfigShape.OTEL_TRACES_EXPORTER,
  OTEL_SERVICE_NAME: baseConfigShape.OTEL_SERVICE_NAME,
  OTEL_RESOURCE_ATTRIBUTES: baseConfigShape.OTEL_RESOURCE_ATTRIBUTES,
  OTEL_TRACES_SAMPLER: baseConfigShape.OTEL_TRACES_SAMPLER,
  OTEL_TRACES_SAMPLER_ARG: baseConfigShape.OTEL_TRACES_SAMPLER_ARG,
};

export type TelemetrySettings = z.infer<z.ZodObject<typeof telemetryConfigShape>>;

/** The OTEL_* settings, or undefined when they are invalid (the service's own config load then says why). */
export function loadTelemetrySettings(env: Env): TelemetrySettings | undefined {
  try {
    return loadConfig(telemetryConfigShape, env);
  } catch {
    return undefined;
  }
}

/** Spans leave the process only with an endpoint, the otlp exporter and the SDK not disabled. */
export function tracesExported(settings: {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_SDK_DISABLED?: boolean | undefined;
  OTEL_TRACES_EXPORTER?: "otlp" | "none" | undefined;
}): boolean {
  return (
    Boolean(settings.OTEL_EXPORTER_OTLP_ENDPOINT) &&
    !settings.OTEL_SDK_DISABLED &&
    settings.OTEL_TRACES_EXPORTER !== "none"
  );
}
