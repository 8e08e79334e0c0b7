// Scale-out (issue 6): two instances each of gateway, stream service and worker behind the
// router, as separate processes. Shows that any instance serves any task, that work spreads,
// that idempotency and rate limits hold across gateways, and that stream clients of a killed
// instance resume on the other with no gap.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import { SseClient } from "../stream/support.ts";

const RPM = 40;
let env: E2eEnvironment;
let key: string;

const terminal = (e: Record<string, any>) =>
  e.type === "WORKFLOW_COMPLETED" || (e.type === "ERROR_OCCURRED" && e.data?.terminal === true);
const gateway = (i: number) => `${env.service("gateway", i).url}/api/v1`;
const stream = (i: number) => `${env.service("stream", i).url}/api/v1/stream`;
const headers = () => ({ "X-API-Key": key, "Content-Type": "application/json" });

// The rate limit is deliberately low (the cross-gateway limit test needs it): each test uses a
// key of its own.
const newKey = async (name: string) => (key = (await env.createApiKey({ name })).key);

async function submit(base: string, body: object, extra: Record<string, string> = {}) {
  const res = await request<{ task_id: string }>(`${base}/tasks`, {
    method: "POST",
    headers: { ...headers(), ...extra },
    body: JSON.stringify(body),
  });
  expect(res.status).toBe(200);
  return res.body.task_id;
}

beforeAll(async () => {
  env = await startE2eEnvironment({
    allowRouterErrors: true, // a stream instance is killed
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: String(RPM), RATE_LIMIT_BURST: "1000", RUN_ACK_WAIT_SECONDS: "2" },
    services: { worker: { OFFLINE_CHUNK_DELAY_MS: "20", WORKER_CONCURRENCY: "4" } },
    replicas: { gateway: 2, stream: 2, worker: 2 },
  });
  key = (await env.createApiKey({ name: "scale-out" })).key;
}, 180_000);
afterAll(async () => {
  await env?.close();
});

describe("two instances of gateway, stream and worker", () => {
  it("a task submitted through gateway 1 streams completely from stream instance 2", async () => {
    await newKey("scale-out stream");
    const taskId = await submit(gateway(0), { query: "Say hello", mode: "simple" });
    const client = new SseClient(`${stream(1)}/sse?workflow_id=${taskId}`, { "X-API-Key": key });
    await client.waitFor((c) => c.events.some(terminal), 30_000, "the terminal event");
    expect(client.seqs).toEqual(client.seqs.map((_, i) => i + 1));
    expect(client.events[0]!.type).toBe("WORKFLOW_STARTED");
    expect(await client.done).toBe("ended");
  });

  it("runs spread over both workers", async () => {
    await newKey("scale-out spread");
    const finished = async (i: number) => {
      const text = (await request(`${env.service("worker", i).metricsUrl}/metrics`)).text;
      return Number(/tog_runs_total\{outcome="finished"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
    };
    const before = (await finished(0)) + (await finished(1));
    await Promise.all(
      Array.from({ length: 12 }, (_, i) => submit(gateway(i % 2), { query: `Say hello ${i}`, mode: "simple" })),
    );
    let a = 0;
    let b = 0;
    for (let i = 0; a + b < before + 12; i++) {
      if (i > 600) throw new Error(`only ${a + b - before} of 12 runs finished`);
      await new Promise((r) => setTimeout(r, 50));
      [a, b] = [await finished(0), await finished(1)];
    }
    expect(a).toBeGreaterThan(0);
    expect(b).toBeGreaterThan(0);
  }, 60_000);

  it("idempotency holds across gateways: the same key on both yields one task", async () => {
    await newKey("scale-out idempotency");
    const idem = randomUUID();
    const body = { query: "exactly once", mode: "simple" };
    const [x, y] = await Promise.all([
      submit(gateway(0), body, { "Idempotency-Key": idem }),
      submit(gateway(1), body, { "Idempotency-Key": idem }),
    ]);
    expect(x).toBe(y);
  });

  it("rate limits hold across gateways: one key's budget is shared", async () => {
    const own = (await env.createApiKey({ name: "scale-out limits" })).key;
    const call = (i: number) =>
      request(`${gateway(i % 2)}/auth/token`, {
        method: "POST",
        headers: { "X-API-Key": own, "Content-Type": "application/json" },
        body: "{}",
      });
    const statuses: number[] = [];
    for (let i = 0; i < RPM + 4; i++) statuses.push((await call(i)).status);
    expect(statuses.filter((s) => s === 201).length).toBeLessThanOrEqual(RPM);
    expect(statuses.slice(-4).every((s) => s === 429)).toBe(true);
  });

  it("killing a stream instance: its clients resume on the other with no gap and no loss", async () => {
    await newKey("scale-out resume");
    const taskId = await submit(gateway(0), {
      query: "Write a long essay about the history of computing",
      mode: "simple",
    });
    const first = new SseClient(`${stream(0)}/sse?workflow_id=${taskId}`, { "X-API-Key": key });
    await first.waitFor((c) => c.events.length >= 5, 30_000, "five events");
    await env.service("stream", 0).kill();
    await first.done;
    const received = [...first.events];
    const second = new SseClient(`${stream(1)}/sse?workflow_id=${taskId}`, {
      "X-API-Key": key,
      "Last-Event-ID": first.lastId!,
    });
    await second.waitFor((c) => c.events.some(terminal), 30_000, "the terminal event");
    const union = new Map<number, unknown>();
    for (const e of [...received, ...second.events]) union.set(e.seq as number, e);
    const seqs = [...union.keys()].sort((p, q) => p - q);
    expect(seqs).toEqual(seqs.map((_, i) => i + 1));
    expect(second.seqs[0]).toBe((received.at(-1)!.seq as number) + 1);
  }, 60_000);
});
