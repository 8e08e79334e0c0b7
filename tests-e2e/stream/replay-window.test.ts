// A client that comes back after the real-time cache (JetStream max_age, 2 s here instead of
// 1 h) dropped the events it missed: the replay reads them from the permanent log (PostgreSQL),
// continues from the cache, then joins live. The test publishes events itself, as a worker of an
// earlier release did (without logging them), so the orchestrator's event persister is on here
// to copy them into the log, as during an upgrade (docs/decisions.md "Event log").
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bus } from "@tog/bus";
import { systemSubjects } from "@tog/bus";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import {
  createTask,
  EventPublisher,
  isTerminalMessage,
  openEnvBus,
  range,
  SseClient,
  sseUrl,
  WsClient,
  wsUrl,
  type Json,
} from "./support.ts";

let env: E2eEnvironment;
let bus: Bus;
let key: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", EVENTS_MAX_AGE_SECONDS: "2", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    only: ["gateway", "orchestrator", "stream"],
    services: { orchestrator: { EVENT_PERSISTER: "on" } },
  });
  bus = await openEnvBus(env);
  key = (await env.createApiKey({ user: "dave@example.com", createUser: true })).key;
}, 120_000);
afterAll(async () => {
  await bus?.close();
  await env?.close();
});

async function persistedCount(taskId: string): Promise<number> {
  const res = await request<Json>(`${env.baseUrl}/tasks/${taskId}/events?limit=1`, {
    headers: { "X-API-Key": key },
  });
  return res.body.total_count as number;
}

async function cachedFirstSeq(taskId: string): Promise<number | null> {
  const msg = await bus.jsm.streams.getMessage(bus.streamName("EVENTS"), {
    seq: 0,
    next_by_subj: systemSubjects(bus.prefix).events(taskId),
  } as never);
  return msg ? (JSON.parse(msg.string()) as { seq: number }).seq : null;
}

async function until(check: () => Promise<boolean>, what: string, timeoutMs = 20_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("replay older than the real-time window", () => {
  it("stitches the permanent log, the cache and live events without a gap", async () => {
    const wf = new EventPublisher(bus, await createTask(env.baseUrl, key));
    await wf.emit(50);
    await until(async () => (await persistedCount(wf.taskId)) === 50, "the persister");
    await until(async () => (await cachedFirstSeq(wf.taskId)) === null, "the cache to drop the events");
    // Workers publish after an expiry like this too: the subject starts empty again.
    const fresh = new EventPublisher(bus, wf.taskId);
    fresh.seq = 50;
    await fresh.emit(10);
    expect(await cachedFirstSeq(wf.taskId)).toBe(51);

    const sse = new SseClient(
      sseUrl(env.baseUrl, { workflow_id: wf.taskId, last_event_id: wf.published[9]!.stream_id }),
      { "X-API-Key": key },
    );
    const fromStart = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), { "X-API-Key": key });
    const ws = new WsClient(wsUrl(env.baseUrl), { "X-API-Key": key });
    await ws.opened;
    ws.send({ type: "subscribe", workflow_id: wf.taskId, last_event_id: 25 });
    await sse.waitFor((c) => c.seqs.length === 50, 15_000, "the replay (11..60)");
    await fromStart.waitFor((c) => c.seqs.length === 60, 15_000, "the replay (1..60)");
    await fresh.emit(10, { last: true, delayMs: 5 });
    expect(await sse.done).toBe("ended");
    expect(await fromStart.done).toBe("ended");
    await ws.waitForMessage(isTerminalMessage);
    expect(sse.seqs).toEqual(range(11, 70));
    expect(fromStart.seqs).toEqual(range(1, 70));
    expect(ws.events().map((e) => e.seq)).toEqual(range(26, 70));
    // What came from the log is what was published, byte for byte in the SSE data line.
    const frames = fromStart.frames.filter((f) => f.data !== undefined);
    expect(frames[0]!.data).toBe(JSON.stringify(wf.published[0]));
    expect(frames[0]!.id).toBe(wf.published[0]!.stream_id);
    ws.close();
  });

  it("replays a task that ended long ago entirely from the log, then ends", async () => {
    const wf = new EventPublisher(bus, await createTask(env.baseUrl, key));
    await wf.emit(30, { last: true });
    await until(async () => (await persistedCount(wf.taskId)) === 30, "the persister");
    await until(async () => (await cachedFirstSeq(wf.taskId)) === null, "the cache to drop the events");
    const sse = new SseClient(sseUrl(env.baseUrl, { workflow_id: wf.taskId, last_event_id: "12" }), {
      "X-API-Key": key,
    });
    expect(await sse.done).toBe("ended");
    expect(sse.seqs).toEqual(range(13, 30));
    const atEnd = await request(sseUrl(env.baseUrl, { workflow_id: wf.taskId }), {
      headers: { "X-API-Key": key, "Last-Event-ID": "30" },
    });
    expect(atEnd.status).toBe(204);
  });
});
