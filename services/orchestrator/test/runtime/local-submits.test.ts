// A worker in the orchestrator's process (ORCHESTRATOR_WORKER=on) waits for that process's open
// submit of a task instead of sending claims the uncommitted row cannot answer
// (runtime/local-submits.ts; docs/performance.md "Claims that wait for the local submit").
import { randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDbPool, type DbPool } from "@tog/db";
import { LocalSubmits } from "../../src/runtime/local-submits.ts";
import { RunRepository } from "../../src/runtime/run.repository.ts";
import { SubmitRepository } from "../../src/tasks/submit.repository.ts";
import { openSubmitTransaction, startRuntimeHarness, type RuntimeHarness } from "./harness.ts";

describe("LocalSubmits", () => {
  it("knows a task while its submit is open, and forgets it once the submit ends either way", async () => {
    const local = new LocalSubmits();
    expect(local.ended("a")).toBeUndefined();
    let commit!: () => void;
    let fail!: (err: Error) => void;
    const committed = local.track(["A"], new Promise<void>((r) => (commit = r)));
    const failed = local.track(["b"], new Promise<void>((_, reject) => (fail = reject)));
    const endedA = local.ended("a");
    const endedB = local.ended("B");
    expect(endedA).toBeDefined();
    expect(endedB).toBeDefined();
    commit();
    fail(new Error("rolled back"));
    await committed;
    await expect(failed).rejects.toThrow("rolled back");
    await expect(endedA).resolves.toBeUndefined();
    await expect(endedB).resolves.toBeUndefined();
    await sleep(0);
    expect(local.size).toBe(0);
  });

  it("a submit tried again alone (after its batch failed) is the one waited for", async () => {
    const local = new LocalSubmits();
    let endBatch!: () => void;
    let endAlone!: () => void;
    void local.track(["t1", "t2"], new Promise<void>((r) => (endBatch = r)));
    void local.track(["t1"], new Promise<void>((r) => (endAlone = r)));
    endBatch();
    await sleep(0);
    expect(local.ended("t1")).toBeDefined();
    expect(local.ended("t2")).toBeUndefined();
    endAlone();
    await sleep(0);
    expect(local.size).toBe(0);
  });
});

describe("the claim of a run whose submit this process has open (PostgreSQL)", () => {
  let h: RuntimeHarness;
  let pool: DbPool;
  beforeAll(async () => {
    h = await startRuntimeHarness("local-submits");
    // The repository's own pool, so that only its statements are counted.
    pool = createDbPool({ databaseUrl: h.databaseUrl, poolMax: 4 });
  });
  afterAll(async () => {
    await pool?.end();
    await h?.close();
  });

  /** Claims a run while its submit is open for longer than the fast attempts (about 50 ms); counts claim statements. */
  async function claimDuringSubmit(local: LocalSubmits | undefined, end: "COMMIT" | "ROLLBACK") {
    const runs = new RunRepository({ db: h.db, pool, localSubmits: local });
    const query = vi.spyOn(pool, "query");
    const claims = () => query.mock.calls.filter(([q]) => (q as { name?: string })?.name === "claim-many").length;
    const taskId = randomUUID();
    const submit = await openSubmitTransaction(h, taskId, "local run");
    let ended!: () => void;
    local?.track([taskId], new Promise<void>((r) => (ended = r)));
    try {
      const claim = runs.claim(taskId, "local-worker", 3_000, 60);
      await sleep(80);
      const beforeEnd = claims();
      await submit.query(end);
      ended?.();
      const result = await claim;
      return { result, beforeEnd, total: claims() };
    } finally {
      submit.release();
      query.mockRestore();
    }
  }

  it("waits for the submit and claims with one statement once it commits", async () => {
    const { result, beforeEnd, total } = await claimDuringSubmit(new LocalSubmits(), "COMMIT");
    expect(result.outcome).toBe("claimed");
    expect(beforeEnd).toBe(0);
    expect(total).toBe(1);
  });

  it("without it (a worker process), polls with claims the open row cannot answer", async () => {
    const { result, beforeEnd } = await claimDuringSubmit(undefined, "COMMIT");
    expect(result.outcome).toBe("claimed");
    expect(beforeEnd).toBeGreaterThanOrEqual(4);
  });

  it("the submit marks its task open while it queues the run, in a new session and in a named one", async () => {
    const local = new LocalSubmits();
    const submits = new SubmitRepository({ pool: h.pool, localSubmits: local });
    for (const sessionRef of [undefined, `named-${randomUUID()}`]) {
      const id = randomUUID();
      let openWhileQueued = false;
      await submits.submit(
        {
          id,
          userId: h.userId,
          sessionRef,
          query: "marked",
          requestedMode: null,
          spec: {},
          traceId: "0".repeat(32),
          traceparent: null,
          tokenBudget: 10,
        },
        async () => {
          openWhileQueued = local.ended(id) !== undefined;
        },
      );
      expect(openWhileQueued, sessionRef ?? "new session").toBe(true);
      await sleep(0);
      expect(local.ended(id)).toBeUndefined();
    }
  });

  it("finds the task missing when the submit rolls back", async () => {
    const { result } = await claimDuringSubmit(new LocalSubmits(), "ROLLBACK");
    expect(result).toEqual({ outcome: "missing" });
  });
});
