// GET /api/v1/stream/ws end to end: handshake auth and ownership, the 4.10 messages (events and
// pong only; refusals are close codes), several tasks on one socket, replay + live, server
// pings, the per-connection message rate.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Bus } from "@tog/bus";
import { startE2eEnvironment, unknownApiKey, type E2eEnvironment } from "@tog/tests-e2e";
import {
  createTask,
  EventPublisher,
  isTerminalMessage,
  openEnvBus,
  range,
  WsClient,
  wsUrl,
  type Json,
} from "./support.ts";

let env: E2eEnvironment;
let bus: Bus;
let aliceKey: string;
let bobKey: string;
let aliceToken: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    only: ["gateway", "orchestrator", "stream"],
    services: { stream: { STREAM_KEEPALIVE_MS: "250", STREAM_WS_MAX_SUBSCRIPTIONS: "3" } },
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
const newTask = async () => new EventPublisher(bus, await createTask(env.baseUrl, aliceKey));

async function connect(
  query: Record<string, string> = {},
  headers: Record<string, string> = alice(),
): Promise<WsClient> {
  const client = new WsClient(wsUrl(env.baseUrl, query), headers);
  await client.opened;
  return client;
}

async function refused(
  query: Record<string, string>,
  headers: Record<string, string>,
): Promise<{ status: number | undefined; body: Json }> {
  const client = new WsClient(wsUrl(env.baseUrl, query), headers);
  await client.opened.catch(() => undefined);
  await client.closed;
  return { status: client.refusedStatus, body: client.refusedBody ? (JSON.parse(client.refusedBody) as Json) : {} };
}

describe("handshake", () => {
  it("authenticates by handshake headers only", async () => {
    expect(await refused({}, {})).toEqual({ status: 401, body: { error: "Unauthorized" } });
    expect((await refused({}, { "X-API-Key": unknownApiKey() })).status).toBe(401);
    expect((await refused({ api_key: aliceKey }, alice())).status).toBe(401);
    expect((await refused({ token: aliceToken }, {})).status).toBe(401);
    for (const headers of [
      alice(),
      { Authorization: `Bearer ${aliceToken}` },
      { Authorization: `Bearer ${aliceKey}` },
    ]) {
      const c = await connect({}, headers);
      c.send({ type: "ping" });
      await c.waitForMessage((m) => m.type === "pong");
      c.close();
    }
  });

  it("subscribes to the query's workflow_id at connect, owner only", async () => {
    const wf = await newTask();
    expect(await refused({ workflow_id: wf.taskId }, { "X-API-Key": bobKey })).toEqual({
      status: 404,
      body: { error: "Task not found" },
    });
    expect((await refused({ workflow_id: wf.taskId, types: "NOPE" }, alice())).status).toBe(400);
    expect((await refused({ workflow_id: wf.taskId, last_event_id: "x" }, alice())).status).toBe(400);
    await wf.emit(3);
    const c = await connect({ workflow_id: wf.taskId, last_event_id: "1" });
    await wf.emit(2, { last: true });
    await c.waitForMessage(isTerminalMessage);
    // Server messages are events (and pong) only: no acknowledgement, no "done" (OpenAPI `streamWs`).
    expect(c.messages.map((m) => m.type)).toEqual(["LLM_PARTIAL", "LLM_PARTIAL", "PROGRESS", "WORKFLOW_COMPLETED"]);
    expect(c.events().map((e) => e.seq)).toEqual([2, 3, 4, 5]);
    expect(c.events().at(-1)).toMatchObject({ status: "COMPLETED", result: "done" });
    await new Promise((r) => setTimeout(r, 200));
    expect(c.messages).toHaveLength(4);
    c.close();
  });
});

describe("messages", () => {
  const WF = "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d";

  /** Sends one message on a fresh connection; the server must close it with this code and reason, sending nothing. */
  async function closedBy(
    sent: string | Json | Buffer,
    headers: Record<string, string> = alice(),
  ): Promise<{ code: number; reason: string }> {
    const c = await connect({}, headers);
    if (Buffer.isBuffer(sent)) c.ws.send(sent, { binary: true });
    else c.send(sent);
    const closed = await c.closed;
    expect(c.messages, JSON.stringify(sent)).toEqual([]);
    return closed;
  }

  it("answers ping with pong and refuses every malformed or unknown message by closing with 4400 and the error as reason", async () => {
    const c = await connect();
    c.send({ type: "ping" });
    expect(await c.waitForMessage((m) => m.type === "pong")).toEqual({ type: "pong" });
    c.close();
    const cases: [string | Json | Buffer, string][] = [
      ["not json", "Invalid message: not JSON"],
      ["[1,2]", 'Invalid message: expected a JSON object with a "type"'],
      [{ kind: "ping" }, 'Invalid message: "type" is required'],
      [{ type: "hello" }, 'Unknown message type: "hello" (expected subscribe, unsubscribe, ping)'],
      [{ type: "subscribe" }, "workflow_id is required"],
      [
        { type: "subscribe", workflow_id: WF, types: ["NOPE"] },
        `Invalid types: unknown event type "NOPE" (workflow_id ${WF})`,
      ],
      [
        { type: "subscribe", workflow_id: WF, last_event_id: "1-2-3" },
        'Invalid last_event_id: "1-2-3" (expected <millis>-<seq> or a non-negative integer)',
      ],
      [Buffer.from([1, 2, 3]), "Invalid message: binary messages are not supported; send JSON text"],
    ];
    for (const [sent, reason] of cases) expect(await closedBy(sent), String(sent)).toEqual({ code: 4400, reason });
    // A reason never exceeds the 123 bytes a close frame holds.
    const long = await closedBy({ type: "x".repeat(200) });
    expect(long.code).toBe(4400);
    expect(long.reason).toBe(`Unknown message type: "${"x".repeat(64)}…" (expected subscribe, unsubsc…`);
    expect(Buffer.byteLength(long.reason)).toBeLessThanOrEqual(123);
  });

  it("ignores an unsubscribe of a task not subscribed: the connection stays open, nothing is sent but pong", async () => {
    const c = await connect();
    c.send({ type: "unsubscribe", workflow_id: "abc" });
    c.send({ type: "unsubscribe", workflow_id: WF });
    c.send({ type: "ping" });
    await c.waitForMessage((m) => m.type === "pong");
    expect(c.messages).toEqual([{ type: "pong" }]);
    expect(c.ws.readyState).toBe(WebSocket.OPEN);
    c.close();
  });

  it("refuses an unknown or another user's task by closing with 4404, naming the task", async () => {
    expect(await closedBy({ type: "subscribe", workflow_id: WF })).toEqual({
      code: 4404,
      reason: `Task not found (workflow_id ${WF})`,
    });
    const wf = await newTask();
    expect(await closedBy({ type: "subscribe", workflow_id: wf.taskId }, { "X-API-Key": bobKey })).toEqual({
      code: 4404,
      reason: `Task not found (workflow_id ${wf.taskId})`,
    });
  });

  it("multiplexes several tasks, each event naming its task; filters, resumes and unsubscribes per task", async () => {
    const [a, b, d] = await Promise.all([newTask(), newTask(), newTask()]);
    await a.emit(6);
    const c = await connect();
    c.send({ type: "subscribe", workflow_id: a.taskId, last_event_id: a.published[2]!.stream_id });
    c.send({ type: "subscribe", workflow_id: b.taskId, types: ["PROGRESS", "WORKFLOW_COMPLETED"] });
    c.send({ type: "subscribe", workflow_id: d.taskId, types: "LLM_PARTIAL", last_event_id: 0 });
    // No acknowledgements: a pong after the three subscribes says the server read them.
    c.send({ type: "ping" });
    await c.waitForMessage((m) => m.type === "pong");
    await Promise.all([
      a.emit(4, { last: true, delayMs: 2 }),
      b.emit(9, { last: true, delayMs: 2 }),
      d.emit(5, { delayMs: 2 }),
    ]);
    await c.waitFor((x) => x.messages.filter(isTerminalMessage).length === 2, 10_000, "two tasks ended");
    await c.waitFor((x) => x.events(d.taskId).length === 4, 5_000, "d's partials");
    expect(c.events(a.taskId).map((e) => e.seq)).toEqual(range(4, 10));
    expect(c.events(b.taskId).map((e) => `${e.seq}:${e.type}`)).toEqual([
      "4:PROGRESS",
      "8:PROGRESS",
      "9:WORKFLOW_COMPLETED",
    ]);
    expect(c.events(d.taskId).map((e) => e.seq)).toEqual([1, 2, 3, 5]);

    c.send({ type: "unsubscribe", workflow_id: d.taskId });
    c.send({ type: "ping" });
    await c.waitFor((x) => x.messages.filter((m) => m.type === "pong").length === 2, 5_000, "the unsubscribe read");
    await d.emit(3);
    await new Promise((r) => setTimeout(r, 300));
    expect(c.events(d.taskId).map((e) => e.seq)).toEqual([1, 2, 3, 5]);

    // Subscribing again replaces the subscription (new filter, new resume point).
    c.send({ type: "subscribe", workflow_id: d.taskId, last_event_id: 6 });
    await d.emit(1, { last: true });
    await c.waitFor((x) => x.messages.filter(isTerminalMessage).length === 3, 5_000, "d ended");
    expect(c.events(d.taskId).map((e) => e.seq)).toEqual([1, 2, 3, 5, 7, 8, 9]);
    expect(
      c.messages.every((m) => typeof m.seq === "number" || m.type === "pong"),
      "events and pong only",
    ).toBe(true);
    c.close();
  });

  it("ends a filtered subscription with the terminal event even when the filter leaves it out", async () => {
    const wf = await newTask();
    const c = await connect({ workflow_id: wf.taskId, types: "PROGRESS" });
    await wf.emit(5, { last: true });
    const last = await c.waitForMessage(isTerminalMessage);
    expect(last).toMatchObject({ type: "WORKFLOW_COMPLETED", seq: 5, workflow_id: wf.taskId });
    expect(c.messages.map((m) => m.type).filter((t) => t !== "PROGRESS")).toEqual(["WORKFLOW_COMPLETED"]);
    c.close();
  });

  it("limits subscriptions per connection: one more closes it with 4400", async () => {
    const wfs = await Promise.all([newTask(), newTask(), newTask(), newTask()]);
    const c = await connect();
    for (const wf of wfs) c.send({ type: "subscribe", workflow_id: wf.taskId });
    expect(await c.closed).toEqual({
      code: 4400,
      reason: `Too many subscriptions on this connection (at most 3) (workflow_id ${wfs[3]!.taskId})`,
    });
    expect(c.messages).toEqual([]);
  });

  it("closes a connection over its message rate with 4429 at the first message too many", async () => {
    const limited = await env.startVariant("stream", { STREAM_WS_MAX_MESSAGES_PER_SECOND: "5" });
    const c = new WsClient(wsUrl(limited.baseUrl), alice());
    await c.opened;
    for (let i = 0; i < 8; i++) c.send({ type: "ping" });
    expect(await c.closed).toEqual({ code: 4429, reason: "Rate limit exceeded: at most 5 messages per second" });
    // The five within the rate were answered; nothing but pong was ever sent.
    expect(c.messages).toEqual(Array.from({ length: 5 }, () => ({ type: "pong" })));
    // Within the rate a connection lives on.
    const calm = new WsClient(wsUrl(limited.baseUrl), alice());
    await calm.opened;
    for (let round = 0; round < 2; round++) {
      for (let i = 0; i < 4; i++) calm.send({ type: "ping" });
      await calm.waitFor((x) => x.messages.length === 4 * (round + 1), 5_000, "the pongs");
      await new Promise((r) => setTimeout(r, 1_100));
    }
    expect(calm.ws.readyState).toBe(WebSocket.OPEN);
    calm.close();
  });
});

describe("server pings", () => {
  it("pings clients and drops a peer that stops answering", async () => {
    let pings = 0;
    const live = new WebSocket(wsUrl(env.baseUrl), { headers: alice() });
    live.on("ping", () => pings++);
    const dead = new WebSocket(wsUrl(env.baseUrl), { headers: alice(), autoPong: false });
    const deadClosed = new Promise<number>((resolve) => dead.once("close", (code) => resolve(code)));
    await Promise.all([new Promise((r) => live.once("open", r)), new Promise((r) => dead.once("open", r))]);
    const code = await deadClosed;
    expect(code).toBe(1006); // terminated without a close frame
    expect(pings).toBeGreaterThanOrEqual(1);
    expect(live.readyState).toBe(WebSocket.OPEN);
    live.close();
  });
});

describe("rate limit of handshakes (docs/security.md)", () => {
  /** A caller of its own, so its counters start at zero. */
  const freshCaller = async () => ({ "X-API-Key": (await env.createApiKey({ user: "alice@example.com" })).key });

  it("puts X-RateLimit-* of the streams' own bucket on the 101 and on refusals after authentication", async () => {
    const caller = await freshCaller();
    for (let i = 1; i <= 2; i++) {
      const c = await connect({}, caller);
      const headers = c.upgradeHeaders!;
      // RATE_LIMIT_STREAM_RPM's default, not this environment's RATE_LIMIT_RPM (100000).
      expect(headers["x-ratelimit-limit"]).toBe("6000");
      expect(headers["x-ratelimit-remaining"]).toBe(String(6000 - i));
      const reset = Number(headers["x-ratelimit-reset"]);
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
      c.close();
    }
    const notOwned = new WsClient(wsUrl(env.baseUrl, { workflow_id: await createTask(env.baseUrl, bobKey) }), caller);
    await notOwned.opened.catch(() => undefined);
    await notOwned.closed;
    expect(notOwned.refusedStatus).toBe(404);
    expect(notOwned.refusedHeaders!["x-ratelimit-remaining"]).toBe("5997");
    const anonymous = new WsClient(wsUrl(env.baseUrl), {});
    await anonymous.opened.catch(() => undefined);
    await anonymous.closed;
    expect(anonymous.refusedStatus).toBe(401);
    expect(anonymous.refusedHeaders!["x-ratelimit-limit"]).toBeUndefined();
  });

  it("refuses the handshake with 429 JSON and Retry-After once the bucket is spent; open sockets keep working", async () => {
    const tiny = await env.startVariant("stream", { RATE_LIMIT_STREAM_RPM: "3" });
    const caller = await freshCaller();
    const open: WsClient[] = [];
    for (let i = 1; i <= 3; i++) {
      const c = new WsClient(wsUrl(tiny.baseUrl), caller);
      await c.opened;
      expect(c.upgradeHeaders!["x-ratelimit-limit"]).toBe("3");
      expect(c.upgradeHeaders!["x-ratelimit-remaining"]).toBe(String(3 - i));
      open.push(c);
    }
    const over = new WsClient(wsUrl(tiny.baseUrl), caller);
    await over.opened.catch(() => undefined);
    await over.closed;
    expect(over.refusedStatus).toBe(429);
    const headers = over.refusedHeaders!;
    expect(headers["content-type"]).toMatch(/^application\/json/);
    const body = JSON.parse(over.refusedBody) as Json;
    expect(Object.keys(body).sort()).toEqual(["error", "retry_after"]);
    expect(body.error).toBe("Rate limit exceeded");
    expect(body.retry_after).toBeGreaterThanOrEqual(1);
    expect(body.retry_after).toBeLessThanOrEqual(60);
    expect(headers["retry-after"]).toBe(String(body.retry_after));
    expect(headers["x-ratelimit-limit"]).toBe("3");
    expect(headers["x-ratelimit-remaining"]).toBe("0");
    expect(
      Math.abs(Number(headers["x-ratelimit-reset"]) - (Math.ceil(Date.now() / 1000) + (body.retry_after as number))),
    ).toBeLessThanOrEqual(1);
    // Messages and events on open sockets are not counted.
    const wf = await newTask();
    open[0]!.send({ type: "subscribe", workflow_id: wf.taskId });
    await wf.emit(4, { last: true });
    await open[0]!.waitFor((c) => c.events(wf.taskId).length === 4, 10_000, "the events");
    for (const c of open) c.close();
  });
});
