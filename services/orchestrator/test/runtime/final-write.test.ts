import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { writeFinals, type FinalWrite } from "../../src/runtime/final-write.repository.ts";
import { LeaseLostError, type StepRecord } from "../../src/runtime/run.repository.ts";
import { startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

// Final writes are group-committed (run.repository.ts): tasks finishing in the same tick share
// one statement, the session totals add up per session, and a lost lease is still refused. A
// cancel before any run ends its task with the same statement (tasks/cancel.repository.ts).

describe("final writes", () => {
  let h: RuntimeHarness;
  beforeAll(async () => {
    h = await startRuntimeHarness("final");
  });
  afterAll(async () => h?.close());

  const write = (tokens: number): FinalWrite => ({
    status: "COMPLETED",
    result: "ok",
    error: "",
    errorType: null,
    mode: "EXECUTION_MODE_SIMPLE",
    modelUsed: "m",
    provider: "offline",
    usage: { inputTokens: 1, outputTokens: tokens - 1, totalTokens: tokens, costUsd: tokens / 1000 },
  });
  const step = (): StepRecord => ({
    key: "finish",
    kind: "finish",
    name: "COMPLETED",
    agentId: "orchestrator",
    status: "completed",
    output: { status: "COMPLETED" },
    events: null,
    firstSeq: null,
    lastSeq: null,
    startedAt: new Date(),
    completedAt: new Date(),
  });

  it("tasks of one session finishing together all count on the session; a lost lease is refused", async () => {
    const first = await h.service.submitTask(submitCommand(h.userId, "one"));
    const others = await Promise.all(
      [1, 2].map(() => h.service.submitTask(submitCommand(h.userId, "more", { sessionId: first.sessionId }))),
    );
    const ids = [first.taskId, ...others.map((o) => o.taskId)];
    const owner = `test-${randomUUID()}`;
    const claims = await Promise.all(ids.map((id) => h.runs.claim(id, owner, 60_000, 60)));
    expect(claims.map((c) => c.outcome)).toEqual(["claimed", "claimed", "claimed"]);

    const results = await Promise.allSettled([
      h.runs.finish(ids[0]!, owner, write(10), step()),
      h.runs.finish(ids[1]!, owner, write(20), step()),
      h.runs.finish(ids[2]!, "someone-else", write(40), step()),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected"]);
    expect((results[2] as PromiseRejectedResult).reason).toBeInstanceOf(LeaseLostError);

    const session = await h.pool.query("SELECT tokens_used, total_cost_usd FROM sessions WHERE id = $1", [
      first.sessionId,
    ]);
    expect(session.rows[0].tokens_used).toBe(30);
    expect(session.rows[0].total_cost_usd).toBeCloseTo(0.03);
    const tasks = await h.pool.query(
      "SELECT id::text, status, total_tokens FROM tasks WHERE id = ANY($1::uuid[]) ORDER BY total_tokens NULLS LAST",
      [ids],
    );
    expect(tasks.rows.map((r) => [r.status, r.total_tokens])).toEqual([
      ["COMPLETED", 10],
      ["COMPLETED", 20],
      ["RUNNING", null],
    ]);
    const steps = await h.pool.query(
      "SELECT count(*)::int AS n FROM task_steps WHERE task_id = ANY($1::uuid[]) AND key = 'finish'",
      [ids],
    );
    expect(steps.rows[0].n).toBe(2);
  });

  it("a cancel before any run ends the task with the same final write, its session left as it was", async () => {
    const { taskId, sessionId } = await h.service.submitTask(submitCommand(h.userId, "never runs"));
    const sessionBefore = await h.pool.query("SELECT tokens_used, updated_at FROM sessions WHERE id = $1", [sessionId]);
    expect(await h.service.cancelTask(h.userId, taskId, "not needed")).toMatchObject({
      accepted: true,
      status: "CANCELLED",
    });

    const task = await h.pool.query(
      `SELECT status, error, error_type, cancel_reason, cancel_requested_at IS NOT NULL AS requested,
              completed_at IS NOT NULL AS completed, lease_owner, total_tokens FROM tasks WHERE id = $1`,
      [taskId],
    );
    expect(task.rows[0]).toEqual({
      status: "CANCELLED",
      error: "Task cancelled: not needed",
      error_type: "CANCELLED",
      cancel_reason: "not needed",
      requested: true,
      completed: true,
      lease_owner: null,
      total_tokens: null,
    });
    const steps = await h.pool.query(
      "SELECT key, name, first_seq, last_seq, events FROM task_steps WHERE task_id = $1",
      [taskId],
    );
    expect(steps.rows).toHaveLength(1);
    expect(steps.rows[0]).toMatchObject({ key: "finish", name: "CANCELLED", first_seq: 1, last_seq: 1, events: null });
    const logged = await h.pool.query("SELECT seq, event FROM task_events WHERE task_id = $1", [taskId]);
    expect(logged.rows.map((r) => r.event)).toMatchObject([
      { seq: 1, type: "ERROR_OCCURRED", data: { status: "CANCELLED", error_message: "Task cancelled: not needed" } },
    ]);
    const signals = await h.pool.query("SELECT name, payload FROM task_signals WHERE task_id = $1", [taskId]);
    expect(signals.rows).toEqual([{ name: "cancel", payload: { reason: "not needed", by: h.userId } }]);
    const sessionAfter = await h.pool.query("SELECT tokens_used, updated_at FROM sessions WHERE id = $1", [sessionId]);
    expect(sessionAfter.rows).toEqual(sessionBefore.rows);

    // Idempotent: a repeat finds the task terminal and writes nothing.
    expect(await h.service.cancelTask(h.userId, taskId, undefined)).toEqual({
      accepted: false,
      status: "CANCELLED",
      message: "Task is already CANCELLED",
    });
    const again = await h.pool.query("SELECT count(*)::int AS n FROM task_signals WHERE task_id = $1", [taskId]);
    expect(again.rows[0].n).toBe(1);
  });

  it("the fence of a task no run claimed does not end a claimed one", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "claimed"));
    expect((await h.runs.claim(taskId, `test-${randomUUID()}`, 60_000, 60)).outcome).toBe("claimed");
    const written = await writeFinals(h.pool, [{ taskId, owner: null, write: write(5), step: step() }]);
    expect(written.size).toBe(0);
    const task = await h.pool.query("SELECT status FROM tasks WHERE id = $1", [taskId]);
    expect(task.rows[0].status).toBe("RUNNING");
  });
});
