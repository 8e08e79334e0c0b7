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
  type TextMapPropagator,
  type TextMapSetter,
} from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { getRPCMetadata, RPCType, W3CTraceContextPropagator } from "@opentelemetry/core";
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
import { preloadedSdk } from "./preloaded-sdk.ts";
import { parseTraceparent } from "./trace-context.ts";
import { tracesExported } from "./telemetry-settings.ts";

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
  sdkDisabled?: boolean | undefined;
  serviceNameOverride?: string | undefined;
  resourceAttributes?: string | undefined;
  sampler?: TracesSampler | undefined;
  samplerArg?: number | undefined;
  /** Tests add an in-memory exporter here. */
  spanProcessors?: SpanProcessor[] | undefined;
}

/** OTEL_TRACES_SAMPLER (+ _ARG) as the OpenTelemetry specification defines them. */
export function samplerFor(name: TracesSampler = "parentbased_always_on", ratio = 1): Sampler {
  const root = name.endsWith("always_off")
    ? new AlwaysOffSampler()
    : name.endsWith("traceidratio")
      ? new TraceIdRatioBasedSampler(ratio)
      : new AlwaysOnSampler();
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
  /** Spans leave the process (OTLP endpoint set, exporter otlp, SDK not disabled). */
  exported: boolean;
  /** The preload's instrumentations run (`@opentelemetry/instrumentation-http`, …); empty without export. */
  instrumentations: string[];
  shutdown(): Promise<void>;
}

/** The OTEL_* part of a service's config (libs/core baseConfigShape), as initTelemetry takes it. */
export interface TelemetryConfig {
  OTEL_EXPORTER_OTLP_ENDPOINT?: string | undefined;
  OTEL_SDK_DISABLED?: boolean | undefined;
  OTEL_TRACES_EXPORTER?: "otlp" | "none" | undefined;
  OTEL_SERVICE_NAME?: string | undefined;
  OTEL_RESOURCE_ATTRIBUTES?: string | undefined;
  OTEL_TRACES_SAMPLER?: TracesSampler | undefined;
  OTEL_TRACES_SAMPLER_ARG?: number | undefined;
}

export function telemetryOptionsOf(serviceName: string, config: TelemetryConfig): TelemetryOptions {
  return {
    serviceName,
    otlpEndpoint: config.OTEL_EXPORTER_OTLP_ENDPOINT,
    exporter: config.OTEL_TRACES_EXPORTER,
    sdkDisabled: config.OTEL_SDK_DISABLED,
    serviceNameOverride: config.OTEL_SERVICE_NAME,
    resourceAttributes: config.OTEL_RESOURCE_ATTRIBUTES,
    sampler: config.OTEL_TRACES_SAMPLER,
    samplerArg: config.OTEL_TRACES_SAMPLER_ARG,
  };
}

/**
 * The W3C propagator, held to the contract's stricter traceparent format (trace-context.ts): a
 * header that breaks it is ignored with its tracestate, so a new trace starts. Used for every
 * carrier, the instrumentations' (HTTP headers, gRPC metadata) included.
 */
export class ContractTraceContextPropagator implements TextMapPropagator {
  readonly #w3c = new W3CTraceContextPropagator();

  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    this.#w3c.inject(ctx, carrier, setter);
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    const raw: unknown = getter.get(carrier, "traceparent");
    const header = Array.isArray(raw) ? (raw[0] as unknown) : raw;
    return parseTraceparent(typeof header === "string" ? header : undefined)
      ? this.#w3c.extract(ctx, carrier, getter)
      : ctx;
  }

  fields(): string[] {
    return this.#w3c.fields();
  }
}

let installed: Telemetry | undefined;
let exporting = false;
let instrumented = false;

/**
 * True when finished spans go somewhere (an exporter or a test's processor). Optional spans on
 * hot paths (steps, model and tool calls, message producers) are only made then; without it
 * the trace id still travels in the active context (docs/decisions.md, "Tracing").
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
 * True when the preload's instrumentations make the HTTP and gRPC server and client spans: the
 * hand-made ones (libs/edge, libs/proto, the stream's SSE path) then give way to them.
 */
export function autoInstrumented(): boolean {
  return instrumented;
}

/**
 * Names the instrumented HTTP server span of the active request by its route template
 * (`GET /api/v1/tasks/:id`, never one name per id): the HTTP instrumentation reads it when the
 * response ends. Undefined (nothing matched) leaves the bare method, whatever prefix the express
 * instrumentation saw. A no-op outside an instrumented request.
 */
export function setHttpRoute(route: string | undefined, ctx: Context = context.active()): void {
  const metadata = getRPCMetadata(ctx);
  if (metadata?.type === RPCType.HTTP) metadata.route = route;
}

/**
 * Installs tracing. Trace ids are always made (so every log line and message carries one).
 * When spans are exported (tracesExported) and the preload ran, the Node SDK starts with the
 * preload's instrumentations; exported without the preload, or for tests' span processors, a
 * plain tracer provider exports the hand-made spans; not exported, a provider without any
 * processor only makes ids (docs/architecture.md, "Tracing").
 */
export function initTelemetry(options: TelemetryOptions): Telemetry {
  if (installed) return installed;
  const exported = tracesExported({
    OTEL_EXPORTER_OTLP_ENDPOINT: options.otlpEndpoint,
    OTEL_SDK_DISABLED: options.sdkDisabled,
    OTEL_TRACES_EXPORTER: options.exporter,
  });
  const spanProcessors: SpanProcessor[] = [...(options.spanProcessors ?? [])];
  if (exported && options.otlpEndpoint) {
    const url = `${options.otlpEndpoint.replace(/\/$/, "")}/v1/traces`;
    spanProcessors.push(new BatchSpanProcessor({ exporter: new OTLPTraceExporter({ url }) }));
  }
  const attributes = parseResourceAttributes(options.resourceAttributes);
  // Precedence as specified: OTEL_SERVICE_NAME, then service.name in OTEL_RESOURCE_ATTRIBUTES, then ours.
  const serviceName = options.serviceNameOverride || attributes[ATTR_SERVICE_NAME] || options.serviceName;
  const sampler = samplerFor(options.sampler, options.samplerArg);
  const propagator = new ContractTraceContextPropagator();
  exporting = spanProcessors.length > 0;
  const sdk = exported ? preloadedSdk() : undefined;
  if (sdk) {
    const started = sdk.start({
      serviceName,
      resourceAttributes: { ...attributes, [ATTR_SERVICE_NAME]: serviceName },
      sampler,
      spanProcessors,
      propagator,
    });
    instrumented = sdk.instrumentations.length > 0;
    installed = { exported, instrumentations: sdk.instrumentations, shutdown: () => started.shutdown() };
    return installed;
  }
  // Without a span processor spans only carry ids: cheap on hot paths.
  const provider = new TracerProvider({
    resource: resourceFromAttributes({ ...attributes, [ATTR_SERVICE_NAME]: serviceName }),
    sampler,
    spanProcessors,
  });
  context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  propagation.setGlobalPropagator(propagator);
  trace.setGlobalTracerProvider(provider);
  installed = { exported, instrumentations: [], shutdown: () => provider.shutdown() };
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
  options: {
    parent?: Context;
    kind?: SpanKind;
    attributes?: Record<string, string | number | boolean>;
    links?: Link[];
  } = {},
): Promise<T> {
  const parent = options.parent ?? context.active();
  const span = tracer().startSpan(
    name,
    { kind: options.kind ?? SpanKind.INTERNAL, attributes: options.attributes, links: options.links },
    parent,
  );
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
