// The telemetry preload: `node --import <this file> services/<svc>/src/main.ts` (npm start, the
// e2e harness and the container images all start services so). Instrumenting ESM modules needs
// the loader hook and the patches in place before the service's first import, hence a preload.
// It only does so when spans are exported; otherwise it returns after reading the OTEL_*
// variables and nothing is patched (docs/architecture.md, "Tracing").
import { loadTelemetrySettings, tracesExported } from "./telemetry-settings.ts";

const settings = loadTelemetrySettings(process.env);
if (settings && tracesExported(settings)) {
  const { enableAutoInstrumentation } = await import("./auto-instrumentation.ts");
  enableAutoInstrumentation();
}
