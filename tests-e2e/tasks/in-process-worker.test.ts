// The orchestrator running tasks itself (ORCHESTRATOR_WORKER=on, `npm start`'s layout; docs/decisions.md
// "The worker in the orchestrator's process"): no worker process runs, and tasks still run with
// their events, cancel and stop cleanly.
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import {
  allEvents,
  expectWellFormed,
  newClient,
  post,
  submit,
  waitForEvent,
  waitForStatus,
  type Client,
} from "./support.ts";

let env: E2eEnvironment;
let alice: Client;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RUN_ACK_WAIT_SECONDS: "2" },
    services: { orchestrator: { ORCHESTRATOR_WORKER: "on", OFFLINE_CHUNK_DELAY_MS: "15" } },
    replicas: { worker: 0 },
  });
  alice = await newClient(env, "alice");
}, 120_000);
afterAll(async () => {
  await env?.close();
});

const finishedRuns = async () => {
  const text = (await request(`${env.service("orchestrator").metricsUrl}/metrics`)).text;
  return Number(/tog_runs_total\{outcome="finished"[^}]*\} (\d+)/.exec(text)?.[1] ?? 0);
};

/** A task whose reply streams for a while, once its first chunk is out (the run is under way). */
async function runningTask(): Promise<string> {
  const { body } = await submit(alice, { query: "Write a long essay about the history of computing", mode: "simple" });
  const taskId = body.task_id as string;
  await waitForEvent(alice, taskId, "LLM_PARTIAL");
  return taskId;
}

describe("the orchestrator with ORCHESTRATOR_WORKER=on and no worker process", () => {
  it("runs a task to completion with a gap-free history, counted in its own metrics", async () => {
    expect(env.has("worker")).toBe(false);
    const before = await finishedRuns();
    const { status, body } = await submit(alice, { query: "Say hello", mode: "simple" });
    expect(status).toBe(200);
    const detail = await waitForStatus(alice, body.task_id as string);
    expect(detail.status).toBe("TASK_STATUS_COMPLETED");
    expectWellFormed(await allEvents(alice, body.task_id as string));
    expect(await finishedRuns()).toBe(before + 1);
  });

  it("cancels a running task", async () => {
    const taskId = await runningTask();
    expect((await post(alice, `/tasks/${taskId}/cancel`)).status).toBe(202);
    expect((await waitForStatus(alice, taskId)).status).toBe("TASK_STATUS_CANCELLED");
    expectWellFormed(await allEvents(alice, taskId));
  });

  it("stops on SIGTERM with a task running: hands it back and exits 0", async () => {
    const taskId = await runningTask();
    const orchestrator = env.service("orchestrator");
    const exit = await orchestrator.stop(15_000);
    expect(exit).toEqual({ code: 0, signal: null });
    const logs = orchestrator.logs().map((r) => r.msg);
    expect(logs).toContain("worker pulling runs");
    expect(logs).toContain("shutdown complete");
    // Handed back: still RUNNING, its lease already lapsed, so the next worker takes it at once.
    const db = new pg.Client({ connectionString: env.database.url });
    await db.connect();
    try {
      const { rows } = await db.query<{ status: string; lapsed: boolean }>(
        "SELECT status, lease_expires_at < now() AS lapsed FROM tasks WHERE id = $1::uuid",
        [taskId],
      );
      expect(rows[0]).toEqual({ status: "RUNNING", lapsed: true });
    } finally {
      await db.end();
    }
  }, 30_000);
});
