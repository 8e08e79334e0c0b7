import type { Sampler, SpanProcessor } from "@opentelemetry/sdk-trace";
import type { TextMapPropagator } from "@opentelemetry/api";

// What the telemetry preload (preload.ts) leaves for initTelemetry: the instrumentations it
// enabled before any service module loaded, and a way to start the Node SDK with them once the
// service's name is known. Type-only imports: a process without the preload loads none of it.

export interface SdkStartOptions {
  serviceName: string;
  resourceAttributes: Record<string, string>;
  sampler: Sampler;
  spanProcessors: SpanProcessor[];
  propagator: TextMapPropagator;
}

export interface PreloadedSdk {
  /** Names of the enabled instrumentations (e.g. `@opentelemetry/instrumentation-http`). */
  instrumentations: string[];
  start(options: SdkStartOptions): { shutdown(): Promise<void> };
}

let preloaded: PreloadedSdk | undefined;

export function setPreloadedSdk(sdk: PreloadedSdk): void {
  preloaded = sdk;
}

export function preloadedSdk(): PreloadedSdk | undefined {
  return preloaded;
}
