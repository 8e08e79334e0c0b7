import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Client, Metadata, credentials } from "@grpc/grpc-js";
import { context, currentTraceIds, extractTraceContext, initTelemetry, trace, withSpan } from "@tog/core";
import { orchestratorServiceDefinition } from "../src/orchestrator-definition.ts";
import { startHarness, type Harness } from "./helpers.ts";

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

let h: Harness;
let seen: Array<{ traceId: string | undefined; parentSpanId: string | undefined; tracestate: string | undefined }>;

beforeAll(async () => {
  initTelemetry({ serviceName: "proto-test" });
  h = await startHarness();
  seen = [];
  h.fake.behaviour.ping = async () => {
    const span = trace.getSpan(context.active()) as
      | (ReturnType<typeof trace.getSpan> & { parentSpanContext?: { spanId: string } })
      | undefined;
    seen.push({
      traceId: currentTraceIds()?.trace_id,
      parentSpanId: span?.parentSpanContext?.spanId,
      tracestate: span?.spanContext().traceState?.serialize(),
    });
  };
  // Open the connection outside any span, so no context can leak into the server through it.
  await h.client.ping();
  seen.length = 0;
});
afterAll(() => h.close());

/** A call carrying hand-written metadata, to see what the server makes of exactly that. */
async function rawPing(entries: Record<string, string>) {
  const raw = new Client(`127.0.0.1:${h.server.port}`, credentials.createInsecure());
  const method = orchestratorServiceDefinition().Ping;
  const metadata = new Metadata();
  for (const [k, v] of Object.entries(entries)) metadata.set(k, v);
  try {
    await new Promise((resolve, reject) =>
      raw.makeUnaryRequest(method.path, method.requestSerialize, method.responseDeserialize, {}, metadata, (e, r) =>
        e ? reject(e) : resolve(r),
      ),
    );
  } finally {
    raw.close();
  }
  return seen.at(-1);
}

describe("trace context over gRPC", () => {
  it("the server handler runs in the caller's trace, as a child of the client call's span", async () => {
    const parent = extractTraceContext({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: "vendor=abc" });
    await withSpan(
      "test.caller",
      async () => {
        await h.client.ping();
      },
      { parent },
    );
    const got = seen.at(-1);
    expect(got?.traceId).toBe(TRACE_ID);
    expect(got?.tracestate).toBe("vendor=abc");
    // Parent is the client's span (not the test's), so the client span sits between them.
    expect(got?.parentSpanId).toMatch(/^[0-9a-f]{16}$/);
    expect(got?.parentSpanId).not.toBe(PARENT_ID);
  });

  it("takes the trace from the call's metadata", async () => {
    const got = await rawPing({ traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`, tracestate: "k=v" });
    expect(got).toEqual({ traceId: TRACE_ID, parentSpanId: PARENT_ID, tracestate: "k=v" });
  });

  it("a call without trace metadata, or with an invalid traceparent, starts a new trace", async () => {
    const none = await rawPing({});
    const invalid = await rawPing({ traceparent: `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01` });
    for (const got of [none, invalid]) {
      expect(got?.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(got?.traceId).not.toBe(TRACE_ID);
      expect(got?.parentSpanId).toBeUndefined();
    }
    expect(none?.traceId).not.toBe(invalid?.traceId);
  });

  it("calls in separate traces stay separate", async () => {
    const a = await withSpan("a", async (span) => {
      await h.client.ping();
      return span.spanContext().traceId;
    });
    const gotA = seen.at(-1)?.traceId;
    const b = await withSpan("b", async (span) => {
      await h.client.ping();
      return span.spanContext().traceId;
    });
    expect(gotA).toBe(a);
    expect(seen.at(-1)?.traceId).toBe(b);
    expect(a).not.toBe(b);
  });
});
