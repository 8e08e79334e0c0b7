// Faults, small (issue 14; docs/reliability.md): the system on servers this file owns — its own
// nats-server, redis-server and PostgreSQL on free ports — so they can be killed and restarted,
// with two workers. The long version with figures is `npm run chaos`. Recovery times are
// printed; the bounds asserted are correctness checks (it recovers at all), not benchmarks.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ownServersAvailable,
  ownServersDir,
  startE2eEnvironment,
  startOwnNats,
  startOwnPostgres,
  startOwnRedis,
  type E2eEnvironment,
  type OwnNats,
  type OwnServer,
} from "@tog/tests-e2e";
import {
  allEvents,
  expectWellFormed,
  get,
  post,
  submit,
  waitForEvent,
  waitForStatus,
  type Client,
  type Json,
} from "../tasks/support.ts";

const available = ownServersAvailable();
let env: E2eEnvironment;
let alice: Client;
let redis: OwnServer;
let postgres: OwnServer;
let nats: OwnNats;
let dir: ReturnType<typeof ownServersDir>;

beforeAll(async () => {
  if (!available) return;
  dir = ownServersDir("tog-faults");
  [redis, postgres, nats] = await Promise.all([
    startOwnRedis(dir.dir),
    startOwnPostgres(dir.dir),
    startOwnNats(dir.dir),
  ]);
  env = await startE2eEnvironment({
    allowRouterErrors: true, // the faults stop and kill servers and services
    servers: { databaseAdminUrl: postgres.url, redisUrl: redis.url, natsUrl: nats.url },
    // Production defaults for RUN_ACK_WAIT_SECONDS and RUN_LEASE_MS: the recovery measured is the real one.
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: { worker: { OFFLINE_CHUNK_DELAY_MS: "15", WORKER_CONCURRENCY: "8" } },
    replicas: { worker: 2 },
    only: ["gateway", "orchestrator", "worker"],
  });
  alice = {
    baseUrl: env.baseUrl,
    key: (await env.createApiKey({ user: "alice@example.com", createUser: true, name: "alice" })).key,
  };
}, 180_000);
afterAll(async () => {
  await env?.close();
  await Promise.allSettled([redis?.stop(), postgres?.stop(), nats?.stopAll()]);
  dir?.remove();
});

/** Index of the worker instance whose log says it claimed the task. */
function ownerOf(taskId: string): number | undefined {
  for (const i of [0, 1]) {
    if (env.logs("worker", i).some((r) => r.msg === "task claimed" && r.taskId === taskId)) return i;
  }
  return undefined;
}

describe.skipIf(!available)("faults on the system's own servers", () => {
  it("a worker SIGKILLed mid-run: the other worker resumes its tasks from their checkpoints within seconds, each write once", async () => {
    const { body } = await submit(alice, {
      query: "Research the history of Rome, then compare it with Athens, and summarize both",
      mode: "complex",
    });
    const taskId = body.task_id as string;
    // Tasks with a side effect: workspace_write (high risk) waits for its approval, holding the
    // run on its worker. Half are approved just before the kill (their write races it), half
    // after it (their write happens in the run that took over).
    const submitWrites = (n: number) =>
      Promise.all(
        Array.from({ length: n }, async () => {
          const key = `faults/${randomUUID()}`;
          const value = `v-${randomUUID()}`;
          const res = await submit(alice, {
            query: `Save "${value}" to workspace key ${key}`,
            mode: "standard",
            context: { role: "analyst" },
          });
          expect(res.status).toBe(200);
          const id = res.body.task_id as string;
          const approvalId = (await waitForEvent(alice, id, "APPROVAL_REQUESTED", 20_000)).data.approval_id;
          return { taskId: id, key, value, approvalId };
        }),
      );
    const writes = await submitWrites(8);
    const approve = (w: (typeof writes)[number]) =>
      post(alice, "/approvals/decision", { workflow_id: w.taskId, approval_id: w.approvalId, approved: true });
    await waitForEvent(alice, taskId, "LLM_PARTIAL", 20_000);
    const victim = ownerOf(taskId);
    expect(victim).toBeDefined();
    // Runs are pulled in batches, so all eight may have gone to the other worker; it then has
    // no free slot (WORKER_CONCURRENCY 8, each run waiting for its approval) and the next go
    // to the victim.
    if (!writes.some((w) => ownerOf(w.taskId) === victim)) writes.push(...(await submitWrites(2)));
    const writesOnVictim = writes.filter((w) => ownerOf(w.taskId) === victim).length;
    const half = Math.ceil(writes.length / 2);
    for (const res of await Promise.all(writes.slice(0, half).map(approve))) expect(res.status).toBe(200);
    const killedAt = Date.now();
    await env.service("worker", victim!).kill();
    for (const res of await Promise.all(writes.slice(half).map(approve))) expect(res.status).toBe(200);

    const detail = await waitForStatus(alice, taskId, undefined, 60_000);
    expect(detail.status).toBe("TASK_STATUS_COMPLETED");
    const events = await allEvents(alice, taskId);
    expectWellFormed(events);
    const recovery = events.find((e) => e.type === "ERROR_RECOVERY");
    expect(recovery).toBeDefined();
    const recoveryMs = Date.parse(recovery!.timestamp) - killedAt;
    process.stdout.write(
      `[faults] worker SIGKILL → run resumed on the other worker after ${recoveryMs} ms; ${writesOnVictim}/${writes.length} write tasks were on the killed worker\n`,
    );
    // A correctness bound (the old ack wait alone was 30 s), not a speed benchmark.
    expect(recoveryMs).toBeLessThan(10_000);
    // No checkpointed model call repeated: each llm step committed exactly one LLM_OUTPUT.
    const timeline = await get(alice, `/tasks/${taskId}/timeline`);
    const llmSteps = (timeline.body.events as Json[]).filter((e) => e.kind === "llm");
    expect(events.filter((e) => e.type === "LLM_OUTPUT")).toHaveLength(llmSteps.length);
    expect(events.filter((e) => e.type === "WORKFLOW_STARTED")).toHaveLength(1);

    // Each write took effect exactly once: one workspace entry with its value, one tool result.
    expect(writesOnVictim).toBeGreaterThan(0);
    for (const w of writes) {
      expect((await waitForStatus(alice, w.taskId, undefined, 60_000)).status).toBe("TASK_STATUS_COMPLETED");
      const history = await allEvents(alice, w.taskId);
      expectWellFormed(history);
      const updates = history.filter((e) => e.type === "WORKSPACE_UPDATED");
      expect(updates.map((e) => e.data)).toEqual([{ key: w.key, value: w.value, action: "set" }]);
      expect(
        history.filter((e) => e.type === "TOOL_OBSERVATION" && e.data.tool_name === "workspace_write"),
      ).toHaveLength(1);
    }
    // Restore two workers for the tests after this one.
    await env.stack.startInstance("worker", { env: { OFFLINE_CHUNK_DELAY_MS: "15", WORKER_CONCURRENCY: "8" } });
  }, 120_000);

  it("Redis restarted (every key lost): a repeated Idempotency-Key still replays the task; without Redis requests keep flowing", async () => {
    const key = `faults-${Date.now()}`;
    const body = { query: "Say hello once", mode: "simple" };
    const first = await submit(alice, body, { "Idempotency-Key": key });
    expect(first.status).toBe(200);
    const before = (await get(alice, "/tasks?limit=1")).body.total_count as number;

    await redis.restart("SIGKILL");
    const again = await submit(alice, body, { "Idempotency-Key": key });
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    expect(again.headers.get("x-idempotency-cached")).toBe("true");
    expect(again.headers.get("x-workflow-id")).toBe(first.body.task_id);
    expect(again.headers.get("x-session-id")).toBe(first.headers.get("x-session-id"));
    expect((await get(alice, "/tasks?limit=1")).body.total_count).toBe(before);
    // A changed body is a new request (contract 4.1 rule 3).
    const changed = await submit(alice, { ...body, query: "Say hello twice" }, { "Idempotency-Key": key });
    expect(changed.body.task_id).not.toBe(first.body.task_id);

    // Redis gone: rate limits fall back to per-instance counting (fail-open, docs/reliability.md),
    // and keyed submissions are deduplicated by the task row alone.
    await redis.stop();
    try {
      const plain = await submit(alice, body);
      expect(plain.status).toBe(200);
      expect(plain.headers.get("x-ratelimit-limit")).toBe("100000");
      const keyed = await submit(alice, body, { "Idempotency-Key": `${key}-down` });
      expect(keyed.status).toBe(200);
      const repeat = await submit(alice, body, { "Idempotency-Key": `${key}-down` });
      expect(repeat.status).toBe(200);
      expect(repeat.body.task_id).toBe(keyed.body.task_id);
      expect(repeat.headers.get("x-idempotency-cached")).toBe("true");
    } finally {
      await redis.start();
    }
    const back = await submit(alice, body, { "Idempotency-Key": `${key}-back` });
    expect(back.status).toBe(200);
  }, 60_000);

  /** Submits until one is accepted (same key each time, as a client retrying would); resolves with the ms it took. */
  async function submitUntilAccepted(
    body: Json,
    key: string,
    timeoutMs = 30_000,
  ): Promise<{ ms: number; taskId: string }> {
    const started = Date.now();
    for (;;) {
      const res = await submit(alice, body, { "Idempotency-Key": key });
      if (res.status === 200) return { ms: Date.now() - started, taskId: res.body.task_id as string };
      expect(res.status).toBe(503);
      if (Date.now() - started > timeoutMs) throw new Error(`still ${res.status} after ${timeoutMs} ms`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  it.each([
    ["NATS", () => nats.servers[0]!],
    ["PostgreSQL", () => postgres],
  ])(
    "%s stopped and restarted: readiness 503, submits refused fast with 503 + Retry-After, the task in flight completes",
    async (name, server) => {
      const inflight = (
        await submit(alice, {
          query: "Research the history of Rome, then compare it with Athens, and summarize both",
          mode: "complex",
        })
      ).body.task_id as string;
      await waitForEvent(alice, inflight, "LLM_PARTIAL", 20_000);
      await server().stop();
      try {
        const readiness = await fetch(`${env.baseUrl}/readiness`);
        expect(readiness.status).toBe(503);
        for (let i = 0; i < 3; i++) {
          const started = Date.now();
          const refused = await submit(
            alice,
            { query: "Say hello", mode: "simple" },
            { "Idempotency-Key": `${name}-down-${i}` },
          );
          expect(refused.status).toBe(503);
          expect(Number(refused.headers.get("retry-after"))).toBeGreaterThan(0);
          // Within the gateway's deadline to the orchestrator (5 s): never a hang, never a 502.
          expect(Date.now() - started).toBeLessThan(5_000);
        }
      } finally {
        await server().start();
      }
      const back = Date.now();
      const accepted = await submitUntilAccepted({ query: "Say hello", mode: "simple" }, `${name}-back`);
      process.stdout.write(`[faults] ${name} back → first submit accepted after ${Date.now() - back} ms\n`);
      expect((await waitForStatus(alice, accepted.taskId, undefined, 30_000)).status).toBe("TASK_STATUS_COMPLETED");
      expect((await waitForStatus(alice, inflight, undefined, 60_000)).status).toBe("TASK_STATUS_COMPLETED");
      expectWellFormed(await allEvents(alice, inflight));
    },
    120_000,
  );
});
