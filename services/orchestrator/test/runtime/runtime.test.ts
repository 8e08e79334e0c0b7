import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ForbiddenError, NotFoundError, ConflictError } from "@tog/core";
import { pending, TaskFailure, type TaskFlow } from "../../src/runtime/flow-context.ts";
import {
  expectGapFree,
  openSubmitTransaction,
  outcome,
  started,
  startRuntimeHarness,
  submitCommand,
  type RuntimeHarness,
} from "./harness.ts";

const untilAborted = (signal: AbortSignal) =>
  new Promise<never>((_, reject) => signal.addEventListener("abort", () => reject(signal.reason), { once: true }));

describe("durable runtime (PostgreSQL + JetStream)", () => {
  let h: RuntimeHarness;
  const calls = new Map<string, number>();
  const count = (key: string) => calls.set(key, (calls.get(key) ?? 0) + 1);

  // One worker serves every test; the task picks its behaviour from the query.
  const task: TaskFlow = async (ctx) => {
    await started(ctx);
    const q = ctx.task.spec.query;
    if (q.startsWith("children")) {
      const results = await Promise.all(
        ["a", "b", "c"].map((id) =>
          ctx.child(id, `agent-${id}`, async (child) => {
            child.emit("AGENT_STARTED", `${id} started`, { role: "generalist", subtask: id, tools_available: [] });
            await new Promise((r) => setTimeout(r, 5));
            return child.step("work", { kind: "llm", name: "work" }, async () => ({
              output: `${id}-done`,
              events: [pending("AGENT_COMPLETED", `${id} done`, { result: `${id}-done`, tokens_used: 1 } as never)],
            }));
          }),
        ),
      );
      return outcome(results.join(","), 4);
    }
    if (q.startsWith("wait")) {
      await Promise.all([
        ctx.child("x", "agent-x", (c) => untilAborted(c.signal)),
        ctx.child("y", "agent-y", (c) => untilAborted(c.signal)),
      ]);
      return outcome("unreachable");
    }
    if (q.startsWith("approve")) {
      const decision = await ctx.requestApproval({
        key: "task",
        toolName: "agent",
        operation: "execute task",
        riskLevel: "medium",
        details: { q },
      });
      if (decision.decision === "denied") throw new TaskFailure("APPROVAL_DENIED", "Approval denied");
      if (decision.decision === "timeout") throw new TaskFailure("APPROVAL_TIMEOUT", "Approval timed out");
      return outcome(
        `approved by ${decision.approvedBy}: ${decision.decision === "approved" ? (decision.modifiedAction ?? "") : ""}`,
      );
    }
    if (q.startsWith("resume")) {
      const a = await ctx.step("a", { kind: "llm", name: "a" }, async () => {
        count(`${ctx.task.id}:a`);
        return {
          output: "A",
          events: [
            pending("LLM_OUTPUT", "a", {
              output: "A",
              model: "m",
              tokens_used: 1,
              cost_usd: 0,
              duration_ms: 1,
            } as never),
          ],
        };
      });
      const b = await ctx.step("b", { kind: "llm", name: "b" }, async () => {
        count(`${ctx.task.id}:b`);
        return { output: "B" };
      });
      return outcome(a + b);
    }
    if (q.startsWith("fail")) throw new TaskFailure("LLM_ERROR", "model unavailable", { retryCount: 2, maxRetries: 2 });
    return outcome(`echo: ${q}`);
  };

  beforeAll(async () => {
    h = await startRuntimeHarness("runtime");
    await h.startWorker(task, { timeoutSeconds: 3 });
  });
  afterAll(async () => h?.close());

  it("runs a submitted task to COMPLETED with gap-free events, persisted result and usage", async () => {
    const submitted = await h.service.submitTask(submitCommand(h.userId, "hello"));
    expect(submitted.status).toBe("QUEUED");
    await h.waitForStatus(submitted.taskId, ["COMPLETED"]);
    const task = await h.service.getTask(h.userId, submitted.taskId);
    expect(task).toMatchObject({
      result: "echo: hello",
      modelUsed: "offline-small",
      provider: "offline",
      mode: "EXECUTION_MODE_STANDARD",
      error: "",
    });
    expect(task.usage).toEqual({ inputTokens: 3, outputTokens: 4, totalTokens: 7, costUsd: 0 });
    expect(task.completedAt).not.toBeNull();
    const events = await h.events(submitted.taskId);
    expectGapFree(events);
    expect(events.map((e) => e.type)).toEqual(["WORKFLOW_STARTED", "WORKFLOW_COMPLETED"]);
    expect(events.at(-1)!.data).toMatchObject({ result: "echo: hello", total_tokens: 7 });
  });

  it("keeps one gap-free seq across concurrent child tasks, terminal event last", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "children"));
    await h.waitForStatus(taskId, ["COMPLETED"]);
    const events = await h.events(taskId);
    expectGapFree(events);
    expect(new Set(events.filter((e) => e.type === "AGENT_COMPLETED").map((e) => e.agent_id))).toEqual(
      new Set(["agent-a", "agent-b", "agent-c"]),
    );
    const timeline = await h.service.getTimeline({ userId: h.userId, taskId, includePayloads: false });
    expect(timeline.entries.filter((e) => e.kind === "child").map((e) => e.status)).toEqual([
      "completed",
      "completed",
      "completed",
    ]);
    expect(await h.service.getTimeline({ userId: h.userId, taskId, includePayloads: true })).toEqual(
      await h.service.getTimeline({ userId: h.userId, taskId, includePayloads: true }),
    );
  });

  it("fails with the task's error type", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "fail"));
    await h.waitForStatus(taskId, ["FAILED"]);
    const task = await h.service.getTask(h.userId, taskId);
    expect(task).toMatchObject({ error: "model unavailable", errorType: "LLM_ERROR", result: null, usage: null });
    const last = (await h.events(taskId)).at(-1)!;
    expect(last.data).toMatchObject({
      error_type: "LLM_ERROR",
      terminal: true,
      status: "FAILED",
      recoverable: false,
      retry_count: 2,
    });
  });

  it("cancels a running task and every child; a second cancel is 409-shaped", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "wait forever"));
    await h.waitForStatus(taskId, ["RUNNING"]);
    await new Promise((r) => setTimeout(r, 100));
    await expect(h.service.cancelTask(h.otherUserId, taskId, undefined)).rejects.toBeInstanceOf(ForbiddenError);
    const res = await h.service.cancelTask(h.userId, taskId, "changed my mind");
    expect(res.accepted).toBe(true);
    await h.waitForStatus(taskId, ["CANCELLED"]);
    const events = await h.events(taskId);
    expectGapFree(events);
    expect(events.at(-1)!.data).toMatchObject({
      status: "CANCELLED",
      error_type: "CANCELLED",
      error_message: "Task cancelled: changed my mind",
    });
    const timeline = await h.service.getTimeline({ userId: h.userId, taskId, includePayloads: false });
    expect(
      timeline.entries
        .filter((e) => e.kind === "child")
        .map((e) => e.status)
        .sort(),
    ).toEqual(["cancelled", "cancelled"]);
    expect(await h.service.cancelTask(h.userId, taskId, undefined)).toEqual({
      accepted: false,
      status: "CANCELLED",
      message: "Task is already CANCELLED",
    });
  });

  it("ends a run that passes AGENT_TIMEOUT_SECONDS as TIMEOUT", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "wait for the timeout"));
    await h.waitForStatus(taskId, ["TIMEOUT"], 10_000);
    const last = (await h.events(taskId)).at(-1)!;
    expect(last.data).toMatchObject({ status: "TIMEOUT", error_type: "TIMEOUT", terminal: true });
  });

  it("delivers approval decisions as persisted signals: approved, denied, second decision refused", async () => {
    const approve = await h.service.submitTask(submitCommand(h.userId, "approve me"));
    const deny = await h.service.submitTask(submitCommand(h.userId, "approve me too"));
    const approvalOf = async (taskId: string) => {
      for (let i = 0; i < 200; i++) {
        const rows = await h.db.$queryRaw<{ id: string }[]>`SELECT id FROM approvals WHERE task_id = ${taskId}::uuid`;
        if (rows[0]) return rows[0].id;
        await new Promise((r) => setTimeout(r, 25));
      }
      throw new Error("no approval requested");
    };
    const a1 = await approvalOf(approve.taskId);
    const a2 = await approvalOf(deny.taskId);
    const decide = (taskId: string, approvalId: string, approved: boolean, userId = h.userId) =>
      h.service.decideApproval({
        userId,
        taskId,
        approvalId,
        approved,
        approvedBy: "alice",
        modifiedAction: "be brief",
      });
    await expect(decide(approve.taskId, "apr_unknown", true)).rejects.toBeInstanceOf(NotFoundError);
    await expect(decide(approve.taskId, a1, true, h.otherUserId)).rejects.toBeInstanceOf(ForbiddenError);
    expect(await decide(approve.taskId, a1, true)).toMatchObject({ decision: "approved", approvalId: a1, runId: "" });
    await expect(decide(approve.taskId, a1, false)).rejects.toBeInstanceOf(ConflictError);
    await decide(deny.taskId, a2, false);
    await h.waitForStatus(approve.taskId, ["COMPLETED"]);
    await h.waitForStatus(deny.taskId, ["FAILED"]);
    expect((await h.service.getTask(h.userId, approve.taskId)).result).toBe("approved by alice: be brief");
    const events = await h.events(approve.taskId);
    expectGapFree(events);
    expect(events.map((e) => e.type)).toEqual([
      "WORKFLOW_STARTED",
      "APPROVAL_REQUESTED",
      "WAITING",
      "APPROVAL_DECISION",
      "WORKFLOW_COMPLETED",
    ]);
    expect(events[1]!.data).toMatchObject({
      approval_id: a1,
      tool_name: "agent",
      risk_level: "medium",
      timeout_seconds: 30,
    });
    expect(events[3]!.data).toMatchObject({ approval_id: a1, decision: "approved", approved_by: "alice" });
    expect((await h.events(deny.taskId)).at(-1)!.data).toMatchObject({
      error_type: "APPROVAL_DENIED",
      status: "FAILED",
    });
  });
});

describe("queued tasks (no worker running yet)", () => {
  let h: RuntimeHarness;
  const ran: string[] = [];
  const stepRuns: string[] = [];
  const task: TaskFlow = async (ctx) => {
    ran.push(ctx.task.id);
    await started(ctx);
    const a = await ctx.step("a", { kind: "llm", name: "a" }, async () => {
      stepRuns.push(`${ctx.task.id}:a`);
      return {
        output: "A",
        events: [
          pending("LLM_OUTPUT", "a", { output: "A", model: "m", tokens_used: 1, cost_usd: 0, duration_ms: 1 } as never),
        ],
      };
    });
    return outcome(`ran ${a}`);
  };
  beforeAll(async () => {
    h = await startRuntimeHarness("queued");
  });
  afterAll(async () => h?.close());

  it("a run that arrives before its submit commits is claimed once the submit commits", async () => {
    // As the submit transaction does: the task's advisory lock, then the rows; the run is on the
    // bus before the COMMIT, so a worker may try to claim a row it cannot see yet.
    const taskId = randomUUID();
    const submit = await openSubmitTransaction(h, taskId, "early run");
    try {
      const claim = h.runs.claim(taskId, "early-worker", 3_000, 60);
      let settled = false;
      void claim.finally(() => (settled = true));
      // Longer than the fast attempts (about 50 ms): the claim must be waiting on the submit's lock.
      await new Promise((r) => setTimeout(r, 150));
      expect(settled).toBe(false);
      await submit.query("COMMIT");
      const result = await claim;
      expect(result.outcome).toBe("claimed");
      // The locking claim reads the session with the row, as the fast one does.
      expect(result.outcome === "claimed" && result.task.session).toEqual({
        tokenBudget: 1000,
        tokensUsed: 0,
        taskCount: 1,
      });
      const row = await h.pool.query("SELECT status, lease_owner FROM tasks WHERE id = $1", [taskId]);
      expect(row.rows[0]).toEqual({ status: "RUNNING", lease_owner: "early-worker" });
    } finally {
      submit.release();
    }
  });

  it("resumes a crashed run from its checkpoints: committed steps are not re-run, their unpublished events go out once", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "crashes after step a"));
    // A worker that claimed the run, checkpointed two steps and died before publishing them.
    const claim = await h.runs.claim(taskId, "dead-worker", 300, 60);
    expect(claim.outcome).toBe("claimed");
    const { buildEvent } = await import("@tog/events");
    const trace = claim.outcome === "claimed" ? claim.task.traceId : "";
    const ev1 = buildEvent({
      workflow_id: taskId,
      type: "WORKFLOW_STARTED",
      agent_id: "orchestrator",
      message: "started",
      seq: 1,
      trace_id: trace,
      data: { query: "q", mode: "standard", session_id: "s", estimated_complexity: 0.5 },
    });
    const ev2 = buildEvent({
      workflow_id: taskId,
      type: "LLM_OUTPUT",
      agent_id: "orchestrator",
      message: "a",
      seq: 2,
      trace_id: trace,
      data: { output: "A", model: "m", tokens_used: 1, cost_usd: 0, duration_ms: 1 } as never,
    });
    const now = new Date();
    for (const [key, ev] of [
      ["start", ev1],
      ["a", ev2],
    ] as const) {
      await h.runs.commitStep(taskId, "dead-worker", {
        key,
        kind: "llm",
        name: key,
        agentId: "orchestrator",
        status: "completed",
        output: key === "a" ? "A" : null,
        events: [ev],
        firstSeq: ev.seq,
        lastSeq: ev.seq,
        startedAt: now,
        completedAt: now,
      });
    }
    // The step rows keep the seq ranges only: the events to send again come from the log.
    const copies = await h.pool.query(
      "SELECT count(*)::int AS n FROM task_steps WHERE task_id = $1 AND events IS NOT NULL",
      [taskId],
    );
    expect(copies.rows[0].n).toBe(0);
    const worker = await h.startWorker(task);
    await h.waitForStatus(taskId, ["COMPLETED"]);
    await worker.stop();
    expect((await h.service.getTask(h.userId, taskId)).result).toBe("ran A");
    expect(stepRuns.filter((k) => k.startsWith(taskId))).toEqual([]);
    const events = await h.events(taskId);
    expectGapFree(events);
    expect(events.map((e) => e.type)).toEqual([
      "WORKFLOW_STARTED",
      "LLM_OUTPUT",
      "ERROR_RECOVERY",
      "WORKFLOW_COMPLETED",
    ]);
    expect(events[2]!.data).toMatchObject({ recovery_action: "resume_from_checkpoint", attempt: 2 });
  });

  it("cancel while queued: CANCELLED at once, the run never starts, one terminal event", async () => {
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "never runs"));
    const other = await h.service.submitTask(submitCommand(h.userId, "runs"));
    expect((await h.service.getTask(h.userId, taskId)).status).toBe("QUEUED");
    expect(await h.service.cancelTask(h.userId, taskId, undefined)).toMatchObject({
      accepted: true,
      status: "CANCELLED",
    });
    expect((await h.service.getTask(h.userId, taskId)).status).toBe("CANCELLED");
    await h.startWorker(task);
    await h.waitForStatus(other.taskId, ["COMPLETED"]);
    const events = await h.events(taskId);
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({ seq: 1, type: "ERROR_OCCURRED", data: { status: "CANCELLED", terminal: true } });
    expect(ran).not.toContain(taskId);
  });

  it("refuses another user's session and reads of another user's task; external ids are per user", async () => {
    const {
      sessionRef,
      sessionId: mine,
      taskId,
    } = await h.service.submitTask(submitCommand(h.userId, "mine", { sessionId: "my-chat" }));
    expect(sessionRef).toBe("my-chat");
    // The same external id of another user is that user's own session (docs/security.md) …
    const theirs = await h.service.submitTask(submitCommand(h.otherUserId, "theirs", { sessionId: "my-chat" }));
    expect(theirs.sessionId).not.toBe(mine);
    // … while a session UUID of another user stays forbidden.
    await expect(
      h.service.submitTask(submitCommand(h.otherUserId, "theirs", { sessionId: mine })),
    ).rejects.toBeInstanceOf(ForbiddenError);
    await expect(h.service.getTask(h.otherUserId, taskId)).rejects.toBeInstanceOf(NotFoundError);
    const again = await h.service.submitTask(submitCommand(h.userId, "again", { sessionId: "my-chat" }));
    expect(again.sessionId).toBe((await h.service.getTask(h.userId, taskId)).sessionId);
    const list = await h.service.listTasks({ userId: h.userId, limit: 10, offset: 0, sessionId: "my-chat" });
    expect(list.totalCount).toBe(2);
    expect(list.tasks.map((t) => t.query)).toEqual(["again", "mine"]);
  });
});
