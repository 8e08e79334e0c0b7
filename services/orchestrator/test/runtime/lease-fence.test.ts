import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { buildEvent } from "@tog/events";
import type { DbPool } from "@tog/db";
import { CheckpointRepository } from "../../src/runtime/checkpoint.repository.ts";
import { EventLogRepository } from "../../src/runtime/event-log.repository.ts";
import { RunRepository, type StepRecord } from "../../src/runtime/run.repository.ts";
import { startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

// A run's checkpoint and live-event writes against a claim by another worker that is in flight
// (docs/reliability.md "The lease fence"): the write waits for the claim and then writes nothing,
// so the new run never misses a step the old one wrote after the claim.

let h: RuntimeHarness;
let claimer: pg.Client;
beforeAll(async () => {
  h = await startRuntimeHarness("lease-fence");
  claimer = new pg.Client({ connectionString: h.databaseUrl });
  await claimer.connect();
}, 60_000);
afterAll(async () => {
  await claimer?.end();
  await h?.close();
});

const event = (taskId: string, seq: number) =>
  buildEvent({
    workflow_id: taskId,
    type: "WORKSPACE_UPDATED",
    agent_id: "orchestrator",
    message: 'Workspace key "k" set',
    seq,
    trace_id: "4bf92f3577b34da6a3ce929d0e0e4736",
    data: { key: "k", value: "v", action: "set" } as never,
  });

const step = (taskId: string, n = 1): StepRecord => {
  const events = [event(taskId, n)];
  return {
    key: `tool:${n}`,
    kind: "tool",
    name: "workspace_write",
    agentId: "orchestrator",
    status: "completed",
    output: { ok: true },
    events,
    firstSeq: n,
    lastSeq: n,
    startedAt: new Date(),
    completedAt: new Date(),
  };
};

/** A task leased by `owner`, as a claim leaves it. */
async function leasedTask(owner: string): Promise<string> {
  const { taskId } = await h.service.submitTask(submitCommand(h.userId, "fenced"));
  expect((await h.runs.claim(taskId, owner, 60_000, 60)).outcome).toBe("claimed");
  return taskId;
}

/** Runs `write` while another worker's claim of the task is open, then commits the claim. */
async function againstOpenClaim<T>(taskId: string, write: () => Promise<T>): Promise<T> {
  await claimer.query("BEGIN");
  await claimer.query("UPDATE tasks SET lease_owner = $2, attempts = attempts + 1 WHERE id = $1", [
    taskId,
    `other-${randomUUID()}`,
  ]);
  let settled = false;
  const pending = write().finally(() => {
    settled = true;
  });
  // Long enough for an unfenced write to commit on its own.
  await new Promise((r) => setTimeout(r, 300));
  const waited = !settled;
  await claimer.query("COMMIT");
  const result = await pending;
  expect(waited, "the write waits for the claim").toBe(true);
  return result;
}

async function written(taskId: string): Promise<{ steps: number; events: number }> {
  const res = await h.pool.query<{ steps: number; events: number }>(
    `SELECT (SELECT count(*) FROM task_steps WHERE task_id = $1)::int AS steps,
            (SELECT count(*) FROM task_events WHERE task_id = $1)::int AS events`,
    [taskId],
  );
  return res.rows[0]!;
}

describe("the lease fence", () => {
  const writers: [string, (taskId: string, owner: string) => Promise<boolean>][] = [
    [
      "a checkpoint",
      (taskId, owner) => new CheckpointRepository({ pool: h.pool }).write({ taskId, owner, steps: [step(taskId)] }),
    ],
    [
      "a live event's log write",
      (taskId, owner) => new EventLogRepository({ pool: h.pool }).write({ taskId, owner, events: [event(taskId, 1)] }),
    ],
  ];
  it.each(writers)(
    "%s submitted while another worker's claim is open waits for it and writes nothing",
    async (_, write) => {
      const owner = `w-${randomUUID()}`;
      const taskId = await leasedTask(owner);
      const ok = await againstOpenClaim(taskId, () => write(taskId, owner));
      expect(ok).toBe(false);
      expect(await written(taskId)).toEqual({ steps: 0, events: 0 });
    },
  );

  it("the run that holds the lease still writes a checkpoint and a live event at the same time", async () => {
    const owner = `w-${randomUUID()}`;
    const taskId = await leasedTask(owner);
    const checkpoints = new CheckpointRepository({ pool: h.pool });
    const log = new EventLogRepository({ pool: h.pool });
    const [stepOk, logOk] = await Promise.all([
      checkpoints.write({ taskId, owner, steps: [step(taskId)] }),
      log.write({ taskId, owner, events: [event(taskId, 2)] }),
    ]);
    expect([stepOk, logOk]).toEqual([true, true]);
    expect(await written(taskId)).toEqual({ steps: 1, events: 2 });
  });
});

/** The pool, counting the statements PostgreSQL aborted as deadlocked. */
function deadlockCounting(pool: DbPool): { pool: DbPool; deadlocks: () => number } {
  let deadlocks = 0;
  const counting = new Proxy(pool, {
    get(target, prop, receiver) {
      if (prop === "query")
        return (...args: unknown[]) =>
          (target.query as (...a: unknown[]) => Promise<unknown>)(...args).catch((err: { code?: string }) => {
            if (err.code === "40P01") deadlocks++;
            throw err;
          });
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
  return { pool: counting, deadlocks: () => deadlocks };
}

describe("statements that lock several tasks of one worker", () => {
  it("lock them in id order: renewals and checkpoint batches in the opposite order never deadlock", async () => {
    const owner = `w-${randomUUID()}`;
    const ids: string[] = [];
    for (let i = 0; i < 16; i++) ids.push(await leasedTask(owner));
    // Checkpoints submitted in descending id order: the batch's rows come in that order.
    const descending = [...ids].sort().reverse();
    const { pool, deadlocks } = deadlockCounting(h.pool);
    const runs = new RunRepository({ db: h.db, pool });
    const checkpoints = new CheckpointRepository({ pool });
    const renewed: string[] = [];
    const holder = { onRenewed: () => renewed.push("ok"), onLost: () => undefined, onError: () => undefined };
    // A 600 ms lease is renewed every 200 ms, each time all 16 rows in one statement.
    const releases = ids.map((id) => runs.holdLease(id, owner, 600, holder));
    try {
      const until = Date.now() + 2_500;
      for (let n = 1; Date.now() < until; n++) {
        const results = await Promise.all(
          descending.map((taskId) => checkpoints.write({ taskId, owner, steps: [step(taskId, n)] })),
        );
        expect(results.every(Boolean)).toBe(true);
      }
    } finally {
      for (const release of releases) release();
    }
    expect(renewed.length).toBeGreaterThan(0);
    expect(deadlocks()).toBe(0);
  }, 30_000);
});
