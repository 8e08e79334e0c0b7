import {
  context,
  propagation,
  trace,
  SpanKind,
  SpanStatusCode,
  type Context,
  type Link,
  type Span,
  type TextMapGetter,
  type TextMapSetter,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { W3CTraceContextPropagator } from "@opentelemetry/core";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  AlwaysOnSampler,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
  TracerProvider,
  type Sampler,
  type SpanProcessor,
} from "@opentelemetry/sdk-trace";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { parseTraceparent } from "./trace-context.ts";

export type TracesSampler =
  | "always_on"
  | "always_off"
  | "traceidratio"
  | "parentbased_always_on"
  | "parentbased_always_off"
  | "parentbased_traceidratio";

export interface TelemetryOptions {
  serviceName: string;
  /** OTLP/HTTP base endpoint; spans are only exported when set. */
  otlpEndpoint?: string | undefined;
  /** The standard OTEL_* settings (libs/core config: OTEL_TRACES_EXPORTER, OTEL_SERVICE_NAME, …). */
  exporter?: "otlp" | "none" | undefined;
  serviceNameOverride?: string | undefined;
  resourceAttributes?: string | undefined;
  sampler?: TracesSampler | undefined;
  samplerArg?: number | undefined;
  /** Tests add an in-memory exporter here. */
  spanProcessors?: SpanProcessor[] | undefined;
}

/** OTEL_TRACES_SAMPLER (+ _ARG) as the OpenTelemetry specification defines them. */
export function samplerFor(name: TracesSampler = "parentbased_always_on", ratio = 1): Sampler {
  const root = name.endsWith("always_off") ? new AlwaysOffSampler() : name.endsWith("traceidratio") ? new TraceIdRatioBasedSampler(ratio) : new AlwaysOnSampler();
  return name.startsWith("parentbased_") ? new ParentBasedSampler({ root }) : root;
}

/** OTEL_RESOURCE_ATTRIBUTES: `k=v,k2=v2`, values percent-encoded; malformed pairs are skipped. */
export function parseResourceAttributes(raw: string | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  for (const pair of (raw ?? "").split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const key = pair.slice(0, at).trim();
    try {
      out[key] = decodeURIComponent(pair.slice(at + 1).trim());
    } catch {
      // not valid percent-encoding: skipped, like the SDKs do
    }
  }
  return out;
}

export interface Telemetry {
  shutdown(): Promise<void>;
}

let installed: Telemetry | undefined;
let exporting = false;

/**
 * True when finished spans go somewhere (an exporter or a test's processor). Optional spans on
 * hot paths (steps, model and tool calls, message producers) are only made then; without it
 * the trace id still travels in the active context (docs/decisions.md, "Tracing cost").
 */
export function spansExported(): boolean {
  return exporting;
}

/** `withSpan` when spans are exported; otherwise fn runs directly, in the current context. */
export function withOptionalSpan<T>(
  name: string,
  fn: (span: Span | undefined) => Promise<T> | T,
  options: { kind?: SpanKind; attributes?: Record<string, string | number | boolean> } = {},
): Promise<T> {
  if (!exporting) return (async () => fn(undefined))();
  return withSpan(name, fn, options);
}

/**
 * Installs the tracer provider, the AsyncLocalStorage context manager and the W3C
 * propagator. Tracing is always on (so every log line and message carries a trace id);
 * exporting is on only when an OTLP endpoint is configured.
 */
export function initTelemetry(options: TelemetryOptions): Telemetry {
  if (installed) return installed;
  const spanProcessors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  // Without an exporter no span processor runs: spans only carry ids (cheap on hot paths).
  if (options.otlpEndpoint && options.exporter !== "none") {
    const url = `${options.otlpEndpoint.replace(/\/$/, "")}/v1/traces`;
    spanProcessors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) }));
  }
  const attributes = parseResourceAttributes(options.resourceAttributes);
  const provider = new TracerProvider({
    // Precedence as specified: OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES, then ours.
    resource: resourceFromAttributes({
      ...attributes,
      [ATTR_SERVICE_NAME]: options.serviceNameOverride || attributes[ATTR_SERVICE_NAME] || options.serviceName,
    }),
    sampler: samplerFor(options.sampler, options.samplerArg),
    spanProcessors,
  });
  exporting = spanProcessors.length > 0;
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
  trace.setGlobalTracerProvider(provider);
  installed = { shutdown: () => provider.shutdown() };
  return installed;
}

export const tracer = () => trace.getTracer("tog");

type Carrier = Record<string, string | string[] | undefined>;

const carrierGetter: TextMapGetter<Carrier> = {
  keys: (c) => Object.keys(c),
  get: (c, key) => {
    const v = c[key] ?? c[key.toLowerCase()];
    return Array.isArray(v) ? v[0] : v;
  },
};

const carrierSetter: TextMapSetter<Record<string, string>> = {
  set: (c, key, value) => {
    c[key] = value;
  },
};

/**
 * Context from incoming `traceparent`/`tracestate`. A traceparent that breaks the
 * documented format is dropped (with its tracestate), so a new trace starts.
 */
export function extractTraceContext(carrier: Carrier): Context {
  const raw = carrierGetter.get(carrier, "traceparent");
  if (!parseTraceparent(Array.isArray(raw) ? raw[0] : raw)) return context.active();
  return propagation.extract(context.active(), carrier, carrierGetter);
}

/** Writes `traceparent` (and `tracestate`) of the active or given context into a carrier. */
export function injectTraceContext(carrier: Record<string, string> = {}, ctx: Context = context.active()) {
  propagation.inject(ctx, carrier, carrierSetter);
  return carrier;
}

/** Runs fn inside a new span (child of `parent` or of the active context). */
export async function withSpan<T>(
  name: string,
  fn: (span: Span) => Promise<T> | T,
  options: { parent?: Context; kind?: SpanKind; attributes?: Record<string, string | number | boolean>; links?: Link[] } = {},
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(name, { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links }, parent);
  try {
    return await context.with(trace.setSpan(parent, span), () => fn(span));
  } catch (err) {
    span.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
    throw err;
  } finally {
    span.end();
  }
}

export function currentTraceIds(): { trace_id: string; span_id: string } | undefined {
  const sc = trace.getSpan(context.active())?.spanContext();
  if (!sc || !trace.isSpanContextValid(sc)) return undefined;
  return { trace_id: sc.traceId, span_id: sc.spanId };
}

export { context, trace, SpanKind, SpanStatusCode };
export type { Context, Span };
