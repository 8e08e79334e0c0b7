// GET /api/v1/stream/sse end to end: the stream service as its own processes (two instances
// behind the router), real NATS and PostgreSQL, the gateway and orchestrator for task rows and
// the permanent log. The test publishes each task's events itself, as a worker would.
import { randomUUID } from "node:crypto";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { EventSource } from "eventsource";
import type { Bus } from "@tog/bus";
import { request, startE2eEnvironment, unknownApiKey, type E2eEnvironment } from "@tog/tests-e2e";
import { createTask, EventPublisher, openEnvBus, range, SseClient, sseUrl, type Json } from "./support.ts";

let env: E2eEnvironment;
let bus: Bus;
let aliceKey: string;
let bobKey: string;
let aliceToken: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    only: ["gateway", "orchestrator", "stream"],
    replicas: { stream: 2 },
    services: { stream: { STREAM_KEEPALIVE_MS: "300", STREAM_RETRY_MS: "200", STREAM_MAX_BUFFER_BYTES: "65536" } },
  });
  bus = await openEnvBus(env);
  aliceKey = (await env.createApiKey({ user: "alice@example.com", createUser: true })).key;
  bobKey = (await env.createApiKey({ user: "bob@example.com", createUser: true })).key;
  aliceToken = await env.accessToken("alice@example.com");
}, 120_000);
afterAll(async () => {
  await bus?.close();
  await env?.close();
});

const alice = () => ({ "X-API-Key": aliceKey });

async function newTask(): Promise<EventPublisher> {
  return new EventPublisher(bus, await createTask(env.baseUrl, aliceKey));
}

describe("SSE wire format, replay and live", () => {
  it("replays, then streams live, in the 4.9 format, and ends after the terminal event", async () => {
    const wf = await newTask();
    await wf.emit(5);
    const client = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), alice());
    await client.waitFor((c) => c.seqs.length === 5, 10_000, "the replay");
    expect(client.status).toBe(200);
    expect(client.headers!.get("content-type")).toMatch(/^text\/event-stream/);
    expect(client.headers!.get("cache-control")).toBe("no-store");
    expect(client.headers!.get("x-content-type-options")).toBe("nosniff");
    expect(client.headers!.get("x-accel-buffering")).toBe("no");
    expect(client.frames[0]!.retry).toBe(200);
    expect(client.frames[0]!.comments.length).toBeGreaterThan(0);

    await wf.emit(6, { last: true, delayMs: 5 });
    expect(await client.done).toBe("ended");
    expect(client.seqs).toEqual(range(1, 11));
    const eventFrames = client.frames.filter((f) => f.data !== undefined);
    eventFrames.forEach((frame, i) => {
      const published = wf.published[i]!;
      expect(frame.id).toBe(published.stream_id);
      expect(frame.event).toBe(published.type);
      const data = JSON.parse(frame.data!) as Json;
      expect(data).toMatchObject(JSON.parse(JSON.stringify(published)) as Json);
    });
    const last = JSON.parse(eventFrames.at(-1)!.data!) as Json;
    expect(last).toMatchObject({
      type: "WORKFLOW_COMPLETED",
      status: "COMPLETED",
      result: "done",
      agent_id: "orchestrator",
    });
    expect(Object.keys(last).slice(0, 9)).toEqual([
      "workflow_id",
      "type",
      "agent_id",
      "message",
      "timestamp",
      "seq",
      "stream_id",
      "trace_id",
      "data",
    ]);
  });

  it("sends a keep-alive comment on an idle stream", async () => {
    const wf = await newTask();
    const client = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), alice());
    await client.waitFor((c) => c.frames.filter((f) => f.comments.includes("ping")).length >= 2, 5_000, "two pings");
    expect(client.seqs).toEqual([]);
    client.close();
  });

  it("resumes from either id form, in the header or the query; the header wins", async () => {
    const wf = await newTask();
    await wf.emit(10, { last: true });
    const id4 = wf.published[3]!.stream_id;
    const cases: { query?: string; header?: string; from: number }[] = [
      { header: id4, from: 5 },
      { header: "6", from: 7 },
      { query: id4, from: 5 },
      { query: "2", from: 3 },
      { query: "0", from: 1 },
      { query: "1", header: "8", from: 9 },
      { query: "", header: "", from: 1 },
    ];
    for (const c of cases) {
      const q: Record<string, string> = { workflow_id: wf.taskId };
      if (c.query !== undefined) q.last_event_id = c.query;
      const client = new SseClient(sseUrl(env.baseUrl, q), {
        ...alice(),
        ...(c.header !== undefined ? { "Last-Event-ID": c.header } : {}),
      });
      expect(await client.done).toBe("ended");
      expect(client.seqs, JSON.stringify(c)).toEqual(range(c.from, 10));
    }
  });

  it("refuses malformed resume values with 400", async () => {
    const wf = await newTask();
    for (const [where, value] of [
      ["query", "abc"],
      ["query", "-1"],
      ["header", "1-2-3"],
      ["header", "1.5"],
    ] as const) {
      const url = sseUrl(env.baseUrl, {
        workflow_id: wf.taskId,
        ...(where === "query" ? { last_event_id: value } : {}),
      });
      const res = await request<Json>(url, {
        headers: { ...alice(), ...(where === "header" ? { "Last-Event-ID": value } : {}) },
      });
      expect(res.status).toBe(400);
      const name = where === "query" ? "last_event_id" : "Last-Event-ID";
      expect(res.body.error).toBe(
        `Invalid ${name}: ${JSON.stringify(value)} (expected <millis>-<seq> or a non-negative integer)`,
      );
    }
  });

  it("a client arriving after the end gets the replay and the end; one at the end gets 204", async () => {
    const wf = await newTask();
    await wf.emit(4, { last: true });
    const late = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), alice());
    expect(await late.done).toBe("ended");
    expect(late.seqs).toEqual([1, 2, 3, 4]);
    const again = await request(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), {
      headers: { ...alice(), "Last-Event-ID": late.lastId! },
    });
    expect(again.status).toBe(204);
    expect(again.text).toBe("");
  });
});

describe("around the streams", () => {
  it("documents itself, answers probes and preflights, and refuses a plain GET of the WebSocket path", async () => {
    const doc = await request<Json>(`${env.baseUrl}/stream/openapi.json`);
    expect(doc.status).toBe(200);
    expect(Object.keys(doc.body.paths)).toEqual(expect.arrayContaining(["/api/v1/stream/sse", "/api/v1/stream/ws"]));
    expect(doc.body.paths["/api/v1/stream/sse"].get.description).toContain("204");
    expect((await request<Json>(`${env.baseUrl}/stream/health`)).body).toMatchObject({ status: "healthy" });
    expect((await request<Json>(`${env.baseUrl}/stream/readiness`)).body).toEqual({
      status: "ready",
      checks: { postgres: "ok", nats: "ok", redis: "ok" },
    });
    const preflight = await fetch(`${env.baseUrl}/stream/sse?workflow_id=x`, {
      method: "OPTIONS",
      headers: {
        Origin: "http://app.example",
        "Access-Control-Request-Method": "GET",
        "Access-Control-Request-Headers": "x-api-key,last-event-id",
      },
    });
    expect(preflight.status).toBe(204);
    expect(preflight.headers.get("access-control-allow-headers")).toMatch(/Last-Event-ID/);
    const cors = await request<Json>(sseUrl(env.baseUrl, { workflow_id: "nope" }), {
      headers: { ...alice(), Origin: "http://app.example" },
    });
    expect(cors.status).toBe(404);
    expect(cors.headers.get("access-control-allow-origin")).toBe("*");
    const plain = await request<Json>(`${env.baseUrl}/stream/ws`, { headers: alice() });
    expect(plain.status).toBe(426);
    expect(plain.body).toEqual({ error: "Expected a WebSocket upgrade" });
  });
});

describe("types filter", () => {
  it("sends only the named types; the filtered-out terminal event still ends the stream", async () => {
    const wf = await newTask();
    await wf.emit(12, { last: true });
    const only = new SseClient(
      sseUrl(env.baseUrl, { workflow_id: wf.taskId, types: "PROGRESS , WORKFLOW_COMPLETED" }),
      alice(),
    );
    expect(await only.done).toBe("ended");
    expect(only.events.map((e) => e.type)).toEqual(["PROGRESS", "PROGRESS", "WORKFLOW_COMPLETED"]);
    expect(only.seqs).toEqual([4, 8, 12]);

    const progress = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId, types: "PROGRESS" }), alice());
    expect(await progress.done).toBe("ended");
    expect(progress.seqs).toEqual([4, 8]);
    // The last frame moves Last-Event-ID to the terminal event, so a reconnect gets 204.
    expect(progress.lastId).toBe(wf.published.at(-1)!.stream_id);
    const reconnect = await request(sseUrl(env.baseUrl, { workflow_id: wf.taskId, types: "PROGRESS" }), {
      headers: { ...alice(), "Last-Event-ID": progress.lastId! },
    });
    expect(reconnect.status).toBe(204);
  });

  it("refuses an unknown type name with 400 naming it", async () => {
    const wf = await newTask();
    for (const types of ["PROGRESS,NOPE", "progress", "WORKFLOW_FAILED"]) {
      const res = await request<Json>(sseUrl(env.baseUrl, { workflow_id: wf.taskId, types }), { headers: alice() });
      expect(res.status).toBe(400);
      const bad = types.split(",").at(-1)!;
      expect(res.body.error).toBe(`Invalid types: unknown event type ${JSON.stringify(bad)}`);
    }
  });
});

describe("authentication and ownership", () => {
  it("needs a credential in a header; refuses one in the query string", async () => {
    const wf = await newTask();
    const url = sseUrl(env.baseUrl, { workflow_id: wf.taskId });
    expect((await request<Json>(url)).status).toBe(401);
    expect((await request<Json>(url, { headers: { "X-API-Key": unknownApiKey() } })).body).toEqual({
      error: "Unauthorized",
    });
    expect((await request(url, { headers: { Authorization: "Bearer not-a-token" } })).status).toBe(401);
    for (const param of ["api_key", "token", "access_token", "key"]) {
      const res = await request(`${url}&${param}=${aliceKey}`, { headers: alice() });
      expect(res.status, param).toBe(401);
    }
  });

  it("accepts X-API-Key, a bearer API key and a bearer access token", async () => {
    const wf = await newTask();
    await wf.emit(2, { last: true });
    for (const headers of [
      alice(),
      { Authorization: `Bearer ${aliceKey}` },
      { Authorization: `Bearer ${aliceToken}` },
    ]) {
      const client = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), headers);
      expect(await client.done).toBe("ended");
      expect(client.status).toBe(200);
      expect(client.seqs).toEqual([1, 2]);
    }
  });

  it("streams a task to its owner only: 404 for others and for unknown ids, 400 without an id", async () => {
    const wf = await newTask();
    for (const [id, key] of [
      [wf.taskId, bobKey],
      ["7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d", aliceKey],
      ["not-a-uuid", aliceKey],
    ] as const) {
      const res = await request<Json>(sseUrl(env.baseUrl, { workflow_id: id }), { headers: { "X-API-Key": key } });
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Task not found" });
      expect(res.headers.get("content-type")).toMatch(/json/);
    }
    const missing = await request<Json>(`${env.baseUrl}/stream/sse`, { headers: alice() });
    expect(missing.status).toBe(400);
    expect(missing.body).toEqual({ error: "workflow_id is required" });
    // Upper-case ids name the same task.
    await wf.emit(1, { last: true });
    const upper = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId.toUpperCase() }), alice());
    expect(await upper.done).toBe("ended");
    expect(upper.status, upper.body).toBe(200);
    expect(upper.seqs).toEqual([1]);
  });

  it("a revoked key can no longer open a stream", async () => {
    const created = await env.createApiKey({ user: "alice@example.com", name: "short-lived" });
    const wf = new EventPublisher(bus, await createTask(env.baseUrl, created.key));
    await env.revokeApiKey(created.id);
    await new Promise((r) => setTimeout(r, 5_500)); // the key cache (AUTH_KEY_CACHE_MS, 5 s)
    const res = await request(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), {
      headers: { "X-API-Key": created.key },
    });
    expect(res.status).toBe(401);
  });
});

describe("fan-out across instances", () => {
  it("serves any task from any instance: clients on both instances get the same events", async () => {
    const wf = await newTask();
    const clients: SseClient[] = [];
    for (const index of [0, 1]) {
      const base = `${env.service("stream", index).url}/api/v1`;
      for (let i = 0; i < 5; i++) clients.push(new SseClient(sseUrl(base, { workflow_id: wf.taskId }), alice()));
    }
    await Promise.all(clients.map((c) => c.waitFor((x) => x.frames.length > 0, 10_000, "the stream to open")));
    await wf.emit(40, { last: true, delayMs: 2 });
    for (const c of clients) {
      expect(await c.done).toBe("ended");
      expect(c.seqs).toEqual(range(1, 40));
    }
  });
});

describe("a real EventSource client", () => {
  it("receives every event once, reconnects with Last-Event-ID after the end and stops on 204", async () => {
    const wf = await newTask();
    await wf.emit(3);
    const received: Json[] = [];
    const ids: string[] = [];
    let errors = 0;
    const es = new EventSource(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), {
      fetch: (input, init) => fetch(input, { ...init, headers: { ...init?.headers, "X-API-Key": aliceKey } }),
    });
    const types = ["LLM_PARTIAL", "PROGRESS", "WORKFLOW_COMPLETED"];
    for (const type of types) {
      es.addEventListener(type, (e) => {
        received.push(JSON.parse(e.data) as Json);
        ids.push(e.lastEventId);
      });
    }
    es.addEventListener("error", () => errors++);
    try {
      const deadline = Date.now() + 15_000;
      while (received.length < 3 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await wf.emit(7, { last: true, delayMs: 3 });
      while (es.readyState !== EventSource.CLOSED && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      expect(es.readyState).toBe(EventSource.CLOSED);
      expect(received.map((e) => e.seq)).toEqual(range(1, 10));
      expect(ids).toEqual(wf.published.map((e) => e.stream_id));
      expect(errors).toBeGreaterThanOrEqual(1); // the final 204 fails the connection for good
    } finally {
      es.close();
    }
  });
});

describe("slow consumers", () => {
  it("closes a stream whose client stops reading instead of buffering without bound; the client resumes", async () => {
    const wf = await newTask();
    const instance = env.service("stream", 0);
    const target = new URL(instance.url);
    const socket = net.connect(Number(target.port), target.hostname);
    await new Promise<void>((resolve) => socket.once("connect", () => resolve()));
    let received = "";
    let closed = false;
    socket.on("data", (chunk: Buffer) => (received += chunk.toString()));
    socket.on("close", () => (closed = true));
    socket.on("error", () => undefined);
    socket.write(
      `GET /api/v1/stream/sse?workflow_id=${wf.taskId} HTTP/1.1\r\nHost: x\r\nX-API-Key: ${aliceKey}\r\n\r\n`,
    );
    await new Promise((r) => setTimeout(r, 300));
    socket.pause(); // the client stops reading
    const overflowed = instance.waitForLog(
      (r) => r.msg === "sse client too slow: closing" && r.taskId === wf.taskId,
      30_000,
    );
    // 8 KB events: the kernel's socket buffers fill first, then the 64 KiB bound of the service.
    const big = "x".repeat(8_000);
    let stop = false;
    void overflowed.then(
      () => (stop = true),
      () => undefined,
    );
    for (let i = 0; i < 4_000 && !stop; i++) await wf.emitChunk(big);
    const record = await overflowed;
    expect(record.buffered as number).toBeGreaterThan(65_536);
    // counted for the TogStreamSlowConsumerCloses alert (deploy/observability)
    const metrics = await (await fetch(`${instance.metricsUrl}/metrics`)).text();
    expect(metrics).toMatch(/^tog_stream_slow_consumer_closes_total\{kind="sse",service="stream"\} [1-9]/m);
    await wf.emit(1, { last: true });
    socket.resume();
    const deadline = Date.now() + 10_000;
    while (!closed && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(closed).toBe(true);
    expect(received).not.toContain("WORKFLOW_COMPLETED"); // cut, not finished
    // The client resumes from the last complete event it parsed.
    const lastSeen = [...received.matchAll(/^id: \d+-(\d+)$/gm)].at(-1)?.[1] ?? "0";
    const resumed = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), {
      ...alice(),
      "Last-Event-ID": lastSeen,
    });
    expect(await resumed.done).toBe("ended");
    expect(resumed.seqs).toEqual(range(Number(lastSeen) + 1, wf.seq));
  });
});

describe("rate limit of stream opens (docs/security.md)", () => {
  /** A caller of its own, so its counters start at zero. */
  const freshCaller = async () => ({ "X-API-Key": (await env.createApiKey({ user: "alice@example.com" })).key });

  const expectReset = (headers: Headers) => {
    const reset = Number(headers.get("x-ratelimit-reset"));
    expect(Number.isInteger(reset)).toBe(true);
    expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
    expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
  };

  it("puts X-RateLimit-* of the streams' own bucket on the SSE response and counts each open, 204 included", async () => {
    const caller = await freshCaller();
    const wf = await newTask();
    await wf.emit(3, { last: true });
    for (let i = 1; i <= 2; i++) {
      const client = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), caller);
      expect(await client.done).toBe("ended");
      expect(client.status).toBe(200);
      // RATE_LIMIT_STREAM_RPM's default, not this environment's RATE_LIMIT_RPM (100000): a bucket of its own.
      expect(client.headers!.get("x-ratelimit-limit")).toBe("6000");
      expect(client.headers!.get("x-ratelimit-remaining")).toBe(String(6000 - i));
      expectReset(client.headers!);
    }
    const atEnd = await fetch(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), {
      headers: { ...caller, "Last-Event-ID": wf.published.at(-1)!.stream_id },
    });
    expect(atEnd.status).toBe(204);
    expect(atEnd.headers.get("x-ratelimit-limit")).toBe("6000");
    expect(atEnd.headers.get("x-ratelimit-remaining")).toBe("5997");
    // A refusal after authentication carries them too; one before it (401) does not.
    const notFound = await fetch(sseUrl(env.baseUrl, { workflow_id: randomUUID() }), { headers: caller });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("x-ratelimit-remaining")).toBe("5996");
    const anonymous = await fetch(sseUrl(env.baseUrl, { workflow_id: wf.taskId }));
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get("x-ratelimit-limit")).toBeNull();
  });

  it("answers 429 JSON with Retry-After once the bucket is spent; open streams and other endpoints are unaffected", async () => {
    const tiny = await env.startVariant("stream", { RATE_LIMIT_STREAM_RPM: "3" });
    const caller = await freshCaller();
    const wf = await newTask();
    await wf.emit(2);
    const open: SseClient[] = [];
    for (let i = 1; i <= 3; i++) {
      const client = new SseClient(sseUrl(tiny.baseUrl, { workflow_id: wf.taskId }), caller);
      await client.waitFor((c) => c.seqs.length === 2, 10_000, "the replay");
      expect(client.headers!.get("x-ratelimit-limit")).toBe("3");
      expect(client.headers!.get("x-ratelimit-remaining")).toBe(String(3 - i));
      open.push(client);
    }
    const res = await fetch(sseUrl(tiny.baseUrl, { workflow_id: wf.taskId }), { headers: caller });
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as Json;
    expect(Object.keys(body).sort()).toEqual(["error", "retry_after"]);
    expect(body.error).toBe("Rate limit exceeded");
    expect(body.retry_after).toBeGreaterThanOrEqual(1);
    expect(body.retry_after).toBeLessThanOrEqual(60);
    expect(res.headers.get("retry-after")).toBe(String(body.retry_after));
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    expect(
      Math.abs(
        Number(res.headers.get("x-ratelimit-reset")) - (Math.ceil(Date.now() / 1000) + (body.retry_after as number)),
      ),
    ).toBeLessThanOrEqual(1);
    // Events on the open streams are never counted; the task API's own limit is untouched.
    await wf.emit(5, { last: true });
    for (const client of open) {
      expect(await client.done).toBe("ended");
      expect(client.seqs).toEqual(range(1, 7));
    }
    const list = await fetch(`${env.baseUrl}/tasks`, { headers: caller });
    expect(list.status).toBe(200);
    expect(list.headers.get("x-ratelimit-limit")).toBe("100");
  });
});
