import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FinalWrite } from "../../src/runtime/final-write.repository.ts";
import { LeaseLostError, type StepRecord } from "../../src/runtime/run.repository.ts";
import { startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

// Final writes are group-committed (run.repository.ts): tasks finishing in the same tick share
// one statement, the session totals add up per session, and a lost lease is still refused.

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
      "SELECT count(*)::int AS n FROM task_steps WHERE workflow_id = ANY($1::uuid[]) AND key = 'finish'",
      [ids],
    );
    expect(steps.rows[0].n).toBe(2);
  });
});
