// One trace through every hop: a client's traceparent on POST /tasks yields spans, exported over
// OTLP/HTTP to an in-process receiver, from the gateway (HTTP server named by route, express
// handler, Redis, gRPC client), the orchestrator (gRPC server, PostgreSQL, run dispatch producer),
// the worker (run consumer, PostgreSQL, steps, model call, tool call, event producers), the event
// persister (when it runs) and the stream service (SSE, Redis, PostgreSQL), all with that trace id and each
// parented to the hop before it. HTTP, express, gRPC, pg and ioredis spans come from the
// OpenTelemetry instrumentations the services' telemetry preload enables (docs/architecture.md,
// "Tracing"); the messaging, step, GenAI and tool spans are the project's own.
import http from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes?: { key: string; value: Record<string, unknown> }[];
  links?: { traceId: string; spanId: string }[];
}
interface ReceivedSpan extends OtlpSpan {
  service: string;
  /** Instrumentation scope: `tog` for the project's own spans, `@opentelemetry/instrumentation-*` for the rest. */
  scope: string;
  attrs: Record<string, unknown>;
}
const KIND = { INTERNAL: 1, SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;
const SCOPE = {
  http: "@opentelemetry/instrumentation-http",
  express: "@opentelemetry/instrumentation-express",
  grpc: "@opentelemetry/instrumentation-grpc",
  pg: "@opentelemetry/instrumentation-pg",
  ioredis: "@opentelemetry/instrumentation-ioredis",
  own: "tog",
} as const;

const received: ReceivedSpan[] = [];
const contentTypes = new Set<string>();
let receiver: http.Server;
let env: E2eEnvironment;

const value = (v: Record<string, unknown>) =>
  v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : (v.doubleValue ?? v.boolValue));

beforeAll(async () => {
  receiver = http.createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () => {
      contentTypes.add(String(req.headers["content-type"]));
      if (req.url === "/v1/traces" && String(req.headers["content-type"]).includes("json")) {
        const body = JSON.parse(Buffer.concat(chunks).toString()) as {
          resourceSpans: {
            resource: { attributes: OtlpSpan["attributes"] };
            scopeSpans: { scope?: { name: string }; spans: OtlpSpan[] }[];
          }[];
        };
        for (const rs of body.resourceSpans) {
          const service = String(value(rs.resource.attributes?.find((a) => a.key === "service.name")?.value ?? {}));
          for (const ss of rs.scopeSpans)
            for (const s of ss.spans)
              received.push({
                ...s,
                service,
                scope: ss.scope?.name ?? "",
                attrs: Object.fromEntries((s.attributes ?? []).map((a) => [a.key, value(a.value)])),
              });
        }
      }
      res.writeHead(200, { "content-type": "application/json" }).end("{}");
    });
  });
  await new Promise<void>((r) => receiver.listen(0, "127.0.0.1", r));
  const port = (receiver.address() as { port: number }).port;
  // The event persister runs only during an upgrade (workers log their own events,
  // docs/decisions.md "Event log"); it is on here so that its spans, when it runs, are checked too.
  env = await startE2eEnvironment({
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}` },
    services: { orchestrator: { EVENT_PERSISTER: "on" } },
  });
}, 120_000);

afterAll(async () => {
  await env?.close();
  await new Promise((r) => receiver?.close(r));
});

const TRACE_ID = "5bf92f3577b34da6a3ce929d0e0e4799";
const CLIENT_SPAN = "10f067aa0ba902b7";

describe("one trace through every hop", () => {
  it("a client's traceparent yields parented spans in every service", async () => {
    const traceparent = `00-${TRACE_ID}-${CLIENT_SPAN}-01`;
    const query = "What is 12*(3+4)?";
    const submitted = await request<{ task_id: string }>(`${env.baseUrl}/tasks`, {
      method: "POST",
      headers: { "Content-Type": "application/json", traceparent },
      body: JSON.stringify({ query, mode: "standard" }),
    });
    expect(submitted.status).toBe(200);
    const taskId = submitted.body.task_id;
    // streamed by a client in the same trace: the stream service's span joins it
    const sse = await fetch(`${env.baseUrl}/stream/sse?workflow_id=${taskId}`, {
      headers: { traceparent },
      signal: AbortSignal.timeout(60_000),
    });
    expect(sse.status).toBe(200);
    expect(await sse.text()).toContain("WORKFLOW_COMPLETED");
    // the same client reads the task and tries a path no route matches: spans named by route, never by id
    expect((await request(`${env.baseUrl}/tasks/${taskId}`, { headers: { traceparent } })).status).toBe(200);
    expect((await request(`${env.baseUrl}/no-such-route/${taskId}`, { headers: { traceparent } })).status).toBe(404);

    const mine = () => received.filter((s) => s.traceId === TRACE_ID);
    // the persister's batch span: in the trace when its batch was all this task's, linked always
    const persisterSpan = () =>
      received.find(
        (s) =>
          s.service === "orchestrator" &&
          s.name === "process events" &&
          (s.links ?? []).some((l) => l.traceId === TRACE_ID),
      );
    const has = (service: string, pred: (s: ReceivedSpan) => boolean) =>
      mine().some((s) => s.service === service && pred(s));
    const deadline = Date.now() + 30_000;
    // batched export: wait until every hop's spans arrived
    while (
      Date.now() < deadline &&
      !(
        has("worker", (s) => s.name.startsWith("execute_tool")) &&
        has("stream", (s) => s.kind === KIND.SERVER) &&
        has("stream", (s) => s.scope === SCOPE.pg) &&
        has("worker", (s) => s.name.startsWith("chat ")) &&
        has("orchestrator", (s) => s.scope === SCOPE.pg) &&
        has("gateway", (s) => s.kind === KIND.SERVER && s.attrs["http.response.status_code"] === 404) &&
        has("orchestrator", (s) => s.kind === KIND.SERVER && s.attrs["rpc.method"] === "GetTask") &&
        persisterSpan()
      )
    ) {
      await new Promise((r) => setTimeout(r, 250));
    }
    const spans = mine();
    expect([...contentTypes].some((t) => t.includes("json"))).toBe(true);
    const byId = new Map(spans.map((s) => [s.spanId, s]));
    const parentOf = (s: ReceivedSpan) => (s.parentSpanId ? byId.get(s.parentSpanId) : undefined);
    const descendsFrom = (s: ReceivedSpan, ancestor: ReceivedSpan) => {
      for (let p = parentOf(s); p; p = parentOf(p)) if (p.spanId === ancestor.spanId) return true;
      return false;
    };
    const under = (ancestor: ReceivedSpan, pred: (s: ReceivedSpan) => boolean) =>
      spans.filter((s) => pred(s) && descendsFrom(s, ancestor));
    const one = (service: string, pred: (s: ReceivedSpan) => boolean, what: string) => {
      const found = spans.find((s) => s.service === service && pred(s));
      expect(
        found,
        `${service}: ${what} in ${JSON.stringify(spans.map((s) => `${s.service}:${s.name}`))}`,
      ).toBeDefined();
      return found!;
    };

    // gateway: the HTTP instrumentation's server spans, named by route template (a bare method
    // when no route matched), children of the client's span; one per request (the hand-made one
    // gave way)
    const gatewayServer = spans.filter((s) => s.service === "gateway" && s.kind === KIND.SERVER);
    expect(gatewayServer.map((s) => s.name).sort()).toEqual(["GET", "GET /api/v1/tasks/:id", "POST /api/v1/tasks"]);
    for (const s of gatewayServer) expect(s, s.name).toMatchObject({ scope: SCOPE.http, parentSpanId: CLIENT_SPAN });
    const gatewayHttp = one(
      "gateway",
      (s) => s.kind === KIND.SERVER && s.name === "POST /api/v1/tasks",
      "POST /api/v1/tasks server span",
    );
    expect(gatewayHttp.attrs["http.route"]).toBe("/api/v1/tasks");
    expect(gatewayHttp.attrs["http.response.status_code"]).toBe(200);
    expect(one("gateway", (s) => s.name === "GET /api/v1/tasks/:id", "task detail span").attrs["http.route"]).toBe(
      "/api/v1/tasks/:id",
    );
    expect(one("gateway", (s) => s.name === "GET", "unmatched request span").attrs["http.route"]).toBeUndefined();
    // express: the route handler's span inside it
    expect(under(gatewayHttp, (s) => s.scope === SCOPE.express).length, "express handler span").toBeGreaterThan(0);
    // Redis (rate limit): ioredis spans inside the request, with the command name only (no key)
    const redisCalls = under(gatewayHttp, (s) => s.scope === SCOPE.ioredis);
    expect(redisCalls.length, "gateway ioredis spans").toBeGreaterThan(0);
    for (const r of redisCalls) {
      expect(r.kind).toBe(KIND.CLIENT);
      expect(r.attrs["db.system.name"]).toBe("redis");
      expect(String(r.attrs["db.query.text"])).toMatch(/^\w+$/);
    }
    // gRPC: the instrumentation's client span inside the request, then the orchestrator's server
    // span under it; one of each (the hand-made ones gave way)
    const grpcClients = spans.filter(
      (s) => s.service === "gateway" && s.kind === KIND.CLIENT && s.attrs["rpc.system"] === "grpc",
    );
    expect(grpcClients.map((s) => s.attrs["rpc.method"]).sort()).toEqual(["GetTask", "SubmitTask"]);
    const grpcClient = grpcClients.find((s) => s.attrs["rpc.method"] === "SubmitTask")!;
    expect(grpcClient.scope).toBe(SCOPE.grpc);
    expect(descendsFrom(grpcClient, gatewayHttp)).toBe(true);
    const grpcServers = spans.filter((s) => s.service === "orchestrator" && s.kind === KIND.SERVER);
    expect(grpcServers.map((s) => s.attrs["rpc.method"]).sort()).toEqual(["GetTask", "SubmitTask"]);
    for (const s of grpcServers)
      expect(parentOf(s), String(s.attrs["rpc.method"])).toMatchObject({
        service: "gateway",
        scope: SCOPE.grpc,
        kind: KIND.CLIENT,
      });
    const grpcServer = grpcServers.find((s) => s.attrs["rpc.method"] === "SubmitTask")!;
    expect(grpcServer.parentSpanId).toBe(grpcClient.spanId);
    expect(grpcServer.scope).toBe(SCOPE.grpc);
    expect(grpcServer.attrs["rpc.system"]).toBe("grpc");
    // PostgreSQL: the submit's pg spans under the gRPC server span, SQL literals masked (the
    // submit inlines the query text), names without ids
    const submitSql = under(grpcServer, (s) => s.scope === SCOPE.pg);
    expect(submitSql.length, "orchestrator pg spans").toBeGreaterThan(0);
    for (const q of submitSql) {
      expect(q.attrs["db.system.name"]).toBe("postgresql");
      expect(q.name).toMatch(/^pg\.query:[A-Z]+( \S+)?$/);
      expect(String(q.attrs["db.query.text"])).not.toContain(query);
    }
    // run dispatch: orchestrator PRODUCER → worker CONSUMER
    const dispatch = one(
      "orchestrator",
      (s) => s.kind === KIND.PRODUCER && s.attrs["messaging.system"] === "nats",
      "run dispatch producer span",
    );
    const consumer = one("worker", (s) => s.kind === KIND.CONSUMER, "run consumer span");
    expect(consumer.parentSpanId).toBe(dispatch.spanId);
    // worker: steps under the consumer; the model call (GenAI) and the tool call under steps
    expect(consumer.scope).toBe(SCOPE.own);
    expect(
      under(consumer, (s) => s.scope === SCOPE.pg).length,
      "worker pg spans (claim, events) under the run consumer",
    ).toBeGreaterThan(0);
    const step = one(
      "worker",
      (s) => s.name.startsWith("step ") && s.parentSpanId === consumer.spanId,
      "step span under the run consumer",
    );
    expect(step.attrs["tog.step.key"]).toEqual(expect.any(String));
    const chat = one("worker", (s) => s.name.startsWith("chat ") && s.kind === KIND.CLIENT, "model call span");
    expect(parentOf(chat)?.name).toMatch(/^step /);
    expect(chat.attrs).toMatchObject({
      "gen_ai.operation.name": "chat",
      "gen_ai.provider.name": expect.any(String),
      "gen_ai.response.model": expect.stringMatching(/offline/),
    });
    expect(chat.attrs["gen_ai.usage.input_tokens"]).toBeGreaterThan(0);
    expect(chat.attrs["gen_ai.usage.output_tokens"]).toBeGreaterThan(0);
    const tool = one("worker", (s) => s.name === "execute_tool calculator", "calculator tool span");
    expect(tool.attrs).toMatchObject({ "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "calculator" });
    expect(parentOf(tool)?.name).toMatch(/^step /);
    // events: worker PRODUCER spans
    one(
      "worker",
      (s) => s.kind === KIND.PRODUCER && String(s.attrs["messaging.destination.name"]).includes(".events."),
      "event producer span",
    );
    // event persister: a CONSUMER batch span linked to the worker's event producer spans
    const persist = persisterSpan();
    expect(persist, "event persister batch span linked to this trace").toBeDefined();
    expect(persist!.kind).toBe(KIND.CONSUMER);
    const linked = persist!.links!.filter((l) => l.traceId === TRACE_ID).map((l) => byId.get(l.spanId));
    expect(linked.length).toBeGreaterThan(0);
    for (const producer of linked)
      expect(producer, "each link points at a producer span of this trace").toMatchObject({
        service: "worker",
        kind: KIND.PRODUCER,
      });
    if (persist!.traceId === TRACE_ID) {
      expect(byId.get(persist!.parentSpanId!)?.kind).toBe(KIND.PRODUCER);
      expect(under(persist!, (s) => s.scope === SCOPE.pg).length, "the persister's insert").toBeGreaterThan(0);
    }
    // stream: the HTTP instrumentation's SSE server span, named by path, child of the client's
    // span, with the stream's Redis (rate limit) and PostgreSQL (replay) calls inside
    const stream = one("stream", (s) => s.kind === KIND.SERVER, "SSE server span");
    expect(stream.parentSpanId).toBe(CLIENT_SPAN);
    expect(stream).toMatchObject({ scope: SCOPE.http, name: "GET /api/v1/stream/sse" });
    expect(spans.filter((s) => s.service === "stream" && s.kind === KIND.SERVER)).toHaveLength(1);
    expect(under(stream, (s) => s.scope === SCOPE.ioredis).length, "stream ioredis spans").toBeGreaterThan(0);
    expect(under(stream, (s) => s.scope === SCOPE.pg).length, "stream pg spans").toBeGreaterThan(0);
    // nothing of this trace is named by an id
    for (const s of spans) expect(s.name, `${s.service} span name`).not.toContain(taskId);
  });

  it("workers and the orchestrator log each task's lifecycle at info with its trace id, not each event", async () => {
    const traceparent = `00-${TRACE_ID.replace(/^5/, "6")}-${CLIENT_SPAN}-01`;
    const traceId = TRACE_ID.replace(/^5/, "6");
    const submitted = await request<{ task_id: string }>(`${env.baseUrl}/tasks`, {
      method: "POST",
      headers: { "Content-Type": "application/json", traceparent },
      body: JSON.stringify({ query: "What is 12*(3+4)?", mode: "standard" }),
    });
    const taskId = submitted.body.task_id;
    const worker = env.service("worker");
    const finished = await worker.waitForLog((r) => r.msg === "task finished" && r.taskId === taskId, 60_000);
    expect(finished).toMatchObject({
      level: "info",
      status: expect.stringMatching(/COMPLETED/),
      duration_ms: expect.any(Number),
      trace_id: traceId,
    });
    const submittedLog = await env
      .service("orchestrator")
      .waitForLog((r) => r.msg === "task submitted" && r.taskId === taskId);
    expect(submittedLog).toMatchObject({ level: "info", trace_id: traceId });
    const mine = worker.logs().filter((r) => r.taskId === taskId && r.level === "info");
    expect(mine.map((r) => r.msg)).toEqual(expect.arrayContaining(["task claimed", "step finished", "task finished"]));
    for (const r of mine) expect(r.trace_id, String(r.msg)).toBe(traceId);
    // the persister may still be storing the last events: count them once the terminal one is in
    let persisted = 0;
    for (const end = Date.now() + 15_000; Date.now() < end; await new Promise((r) => setTimeout(r, 100))) {
      const page = await request<{ events: { type: string }[]; total_count: number }>(
        `${env.baseUrl}/tasks/${taskId}/events?limit=200`,
      );
      if (page.body.events.some((e) => e.type === "WORKFLOW_COMPLETED")) {
        persisted = page.body.total_count;
        break;
      }
    }
    expect(persisted, "the terminal event was persisted").toBeGreaterThan(0);
    expect(mine.length, "fewer info lines than events: nothing per event").toBeLessThan(persisted);
  });
});
