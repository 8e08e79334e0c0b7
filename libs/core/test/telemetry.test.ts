import { context, ROOT_CONTEXT, SpanKind, trace, TraceFlags } from "@opentelemetry/api";
import { InMemorySpanExporter, SamplingDecision, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { describe, expect, it } from "vitest";
import { maskSqlLiterals, pgSpanName } from "../src/auto-instrumentation.ts";
import {
  baseConfigShape,
  ContractTraceContextPropagator,
  currentTraceIds,
  initTelemetry,
  loadConfig,
  parseResourceAttributes,
  samplerFor,
  tracer,
} from "../src/index.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const decide = (name: Parameters<typeof samplerFor>[0], ratio: number, parentSampled?: boolean) => {
  const parent =
    parentSampled === undefined
      ? ROOT_CONTEXT
      : trace.setSpanContext(ROOT_CONTEXT, {
          traceId: TRACE_ID,
          spanId: "00f067aa0ba902b7",
          traceFlags: parentSampled ? TraceFlags.SAMPLED : TraceFlags.NONE,
          isRemote: true,
        });
  return samplerFor(name, ratio).shouldSample(parent, TRACE_ID, "x", SpanKind.SERVER, {}, []).decision;
};

describe("standard OTEL_* settings", () => {
  it("are read by the config schema every service shares", () => {
    const c = loadConfig(baseConfigShape, {
      OTEL_TRACES_EXPORTER: "none",
      OTEL_SERVICE_NAME: "edge-eu",
      OTEL_RESOURCE_ATTRIBUTES: "deployment.environment.name=staging",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: "0.25",
      OTEL_EXPORTER_OTLP_ENDPOINT: "",
    });
    expect(c).toMatchObject({
      OTEL_TRACES_EXPORTER: "none",
      OTEL_SERVICE_NAME: "edge-eu",
      OTEL_TRACES_SAMPLER: "parentbased_traceidratio",
      OTEL_TRACES_SAMPLER_ARG: 0.25,
    });
    expect(c.OTEL_EXPORTER_OTLP_ENDPOINT).toBeUndefined();
    expect(() => loadConfig(baseConfigShape, { OTEL_TRACES_SAMPLER: "sometimes" })).toThrow(/OTEL_TRACES_SAMPLER/);
  });

  it("OTEL_TRACES_SAMPLER follows the specification", () => {
    const { RECORD_AND_SAMPLED: yes, NOT_RECORD: no } = SamplingDecision;
    expect(decide("always_on", 1)).toBe(yes);
    expect(decide("always_off", 1)).toBe(no);
    expect(decide("traceidratio", 0)).toBe(no);
    expect(decide("traceidratio", 1)).toBe(yes);
    // parent-based: a remote parent's sampled flag decides, the root sampler only for new traces
    expect(decide("parentbased_always_off", 1, true)).toBe(yes);
    expect(decide("parentbased_always_on", 1, false)).toBe(no);
    expect(decide("parentbased_always_off", 1)).toBe(no);
    expect(decide("parentbased_traceidratio", 1)).toBe(yes);
  });

  it("OTEL_RESOURCE_ATTRIBUTES is key=value pairs, percent-decoded, malformed ones skipped", () => {
    expect(parseResourceAttributes("a=1, b = two%20words ,broken,=x,c=%E0%A4%A")).toEqual({ a: "1", b: "two words" });
    expect(parseResourceAttributes(undefined)).toEqual({});
  });

  it("OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES end up on the spans; an unsampled span still has the trace id", async () => {
    const spans = new InMemorySpanExporter();
    initTelemetry({
      serviceName: "gateway",
      serviceNameOverride: "gateway-eu",
      resourceAttributes: "deployment.environment.name=staging,service.name=ignored",
      sampler: "parentbased_always_on",
      spanProcessors: [new SimpleSpanProcessor({ exporter: spans })],
    });
    tracer().startSpan("work").end();
    const [span] = spans.getFinishedSpans();
    expect(span?.resource.attributes["service.name"]).toBe("gateway-eu");
    expect(span?.resource.attributes["deployment.environment.name"]).toBe("staging");

    // a client that did not sample: nothing recorded, but logs still get its trace id
    const parent = trace.setSpanContext(ROOT_CONTEXT, {
      traceId: TRACE_ID,
      spanId: "00f067aa0ba902b7",
      traceFlags: TraceFlags.NONE,
      isRemote: true,
    });
    const unsampled = tracer().startSpan("unsampled", {}, parent);
    expect(unsampled.isRecording()).toBe(false);
    context.with(trace.setSpan(parent, unsampled), () => expect(currentTraceIds()?.trace_id).toBe(TRACE_ID));
    unsampled.end();
    expect(spans.getFinishedSpans()).toHaveLength(1);
  });
});

describe("ContractTraceContextPropagator", () => {
  const getter = {
    keys: (c: Record<string, string>) => Object.keys(c),
    get: (c: Record<string, string>, k: string) => c[k],
  };
  const extract = (carrier: Record<string, string>) =>
    trace.getSpanContext(new ContractTraceContextPropagator().extract(ROOT_CONTEXT, carrier, getter));

  it("continues a traceparent of the contract's format, with its tracestate", () => {
    const sc = extract({ traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01`, tracestate: "vendor=1" });
    expect(sc).toMatchObject({ traceId: TRACE_ID, spanId: "00f067aa0ba902b7", isRemote: true });
    expect(sc?.traceState?.get("vendor")).toBe("1");
  });

  it("ignores what W3C would accept but the contract does not (another version, extra fields, upper case)", () => {
    expect(extract({ traceparent: `01-${TRACE_ID}-00f067aa0ba902b7-01`, tracestate: "vendor=1" })).toBeUndefined();
    expect(extract({ traceparent: `00-${TRACE_ID}-00f067aa0ba902b7-01-extra` })).toBeUndefined();
    expect(extract({ traceparent: `00-${TRACE_ID.toUpperCase()}-00f067aa0ba902b7-01` })).toBeUndefined();
  });
});

describe("instrumentation settings", () => {
  it("SQL literals are masked in span attributes; span names keep the operation only", () => {
    expect(maskSqlLiterals(`INSERT INTO t VALUES ('it''s', E'a\\\\b', '{"q":"secret"}'::jsonb, 3)`)).toBe(
      "INSERT INTO t VALUES (?, ?, ?::jsonb, 3)",
    );
    expect(pgSpanName("BEGIN;\nWITH s AS (SELECT 1) SELECT * FROM s", "tog")).toBe("pg.query:BEGIN tog");
    expect(pgSpanName("  select 1", undefined)).toBe("pg.query:SELECT");
  });
});
