import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { InMemorySpanExporter, SimpleSpanProcessor } from "@opentelemetry/sdk-trace";
import { initTelemetry, injectTraceContext } from "@tog/core";
import { captureLogs, sleep, startTestApp, type TestApp } from "./edge-harness.ts";

const logs = captureLogs();
const spans = new InMemorySpanExporter();
let app: TestApp;

beforeAll(async () => {
  initTelemetry({ serviceName: "edge-test", spanProcessors: [new SimpleSpanProcessor({ exporter: spans })] });
  app = await startTestApp({
    logger: logs.logger,
    routes: (r) => {
      // What a downstream call from this handler would carry.
      r.get("/ctx", (req, res) => void res.json({ carrier: injectTraceContext(), traceId: req.traceId }));
      r.get("/things/:id", (req, res) => void res.json({ traceId: req.traceId }));
    },
  });
});

afterAll(() => app.close());

const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const PARENT_ID = "00f067aa0ba902b7";

async function call(headers: Record<string, string>) {
  const res = await fetch(`${app.url}/ctx`, { headers });
  expect(res.status).toBe(200);
  const body = (await res.json()) as { carrier: Record<string, string>; traceId: string };
  // The request log line is written when the response finishes.
  let line: Record<string, unknown> | undefined;
  for (let i = 0; i < 50 && !line; i++) {
    line = logs.lines.find((l) => l.msg === "request" && l.trace_id === body.traceId);
    if (!line) await sleep(10);
  }
  return { body, line };
}

describe("traceparent", () => {
  it("continues a valid trace: the log line and downstream calls carry the sent trace id and tracestate", async () => {
    const { body, line } = await call({
      traceparent: `00-${TRACE_ID}-${PARENT_ID}-01`,
      tracestate: "vendor=abc,other=1",
    });
    expect(body.traceId).toBe(TRACE_ID);
    expect(line).toMatchObject({ trace_id: TRACE_ID, method: "GET", path: "/ctx", status: 200 });
    const [version, traceId, spanId, flags] = body.carrier.traceparent!.split("-");
    expect([version, traceId, flags]).toEqual(["00", TRACE_ID, "01"]);
    expect(spanId).toMatch(/^[0-9a-f]{16}$/);
    expect(spanId).not.toBe(PARENT_ID);
    expect(line!.span_id).toBe(spanId);
    expect(body.carrier.tracestate).toBe("vendor=abc,other=1");
  });

  const invalid: Array<[string, string]> = [
    ["wrong version", `01-${TRACE_ID}-${PARENT_ID}-01`],
    ["short trace id", `00-${TRACE_ID.slice(1)}-${PARENT_ID}-01`],
    ["long parent id", `00-${TRACE_ID}-${PARENT_ID}0-01`],
    ["uppercase hex", `00-${TRACE_ID.toUpperCase()}-${PARENT_ID}-01`],
    ["all-zero trace id", `00-${"0".repeat(32)}-${PARENT_ID}-01`],
    ["all-zero parent id", `00-${TRACE_ID}-${"0".repeat(16)}-01`],
    ["garbage", "hello"],
  ];

  for (const [name, header] of invalid) {
    it(`starts a new trace for an invalid header (${name}) without failing`, async () => {
      const { body, line } = await call({ traceparent: header, tracestate: "vendor=abc" });
      expect(body.traceId).toMatch(/^[0-9a-f]{32}$/);
      expect(body.traceId).not.toBe(TRACE_ID);
      expect(body.traceId).not.toBe(TRACE_ID.toUpperCase());
      expect(line).toMatchObject({ trace_id: body.traceId, status: 200 });
      expect(body.carrier.traceparent).toMatch(new RegExp(`^00-${body.traceId}-[0-9a-f]{16}-0[01]$`));
      expect(body.carrier.tracestate).toBeUndefined();
    });
  }

  it("starts a new trace per request without a header", async () => {
    const a = await call({});
    const b = await call({});
    expect(a.body.traceId).toMatch(/^[0-9a-f]{32}$/);
    expect(a.body.traceId).not.toBe(b.body.traceId);
    expect(a.line).toBeDefined();
  });
});

describe("server span", () => {
  it("is named by the route template, not the raw path (one name for every id)", async () => {
    const ids: string[] = [];
    for (const id of ["a1", "b2"]) {
      const res = await fetch(`${app.url}/things/${id}`, {
        headers: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
      });
      expect(res.status).toBe(200);
      ids.push(((await res.json()) as { traceId: string }).traceId);
    }
    expect(ids).toEqual([TRACE_ID, TRACE_ID]);
    const mine = spans
      .getFinishedSpans()
      .filter(
        (s) => s.attributes["http.route"] !== undefined && String(s.attributes["http.route"]).endsWith("/things/:id"),
      );
    expect(mine).toHaveLength(2);
    for (const s of mine) {
      expect(s.name).toBe(`GET ${String(s.attributes["http.route"])}`);
      expect(s.name).not.toMatch(/a1|b2/);
      expect(s.spanContext().traceId).toBe(TRACE_ID);
      expect(s.parentSpanContext?.spanId).toBe(PARENT_ID);
      expect(s.attributes["http.response.status_code"]).toBe(200);
    }
  });

  it("an unmatched path keeps the bare method as its name", async () => {
    const res = await fetch(`${app.url}/no/such/route/42`);
    await res.body?.cancel();
    const last = spans.getFinishedSpans().at(-1);
    expect(last?.name).toBe("GET");
  });
});
