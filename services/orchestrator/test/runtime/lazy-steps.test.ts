import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { pending, type FlowContext, type TaskFlow } from "../../src/runtime/flow-context.ts";
import {
  agentFinished,
  expectGapFree,
  llmOutput,
  outcome,
  started,
  startRuntimeHarness,
  stepWriters,
  submitCommand,
  type RuntimeHarness,
} from "./harness.ts";

// Lazy steps (flow-context.ts, docs/performance.md "Lazy steps"): written with the next
// checkpoint or the final write, in the same statement; written before a live event goes out;
// redone by the next run when the run ends before they were written, with seqs still gap-free.

const agentStarted = (ctx: FlowContext, runs: string[]) =>
  ctx.step("agent:start", { kind: "start", name: "agent", lazy: true }, async () => {
    runs.push(`${ctx.task.id}:agent:start`);
    return {
      output: { at: 1 },
      events: [pending("AGENT_STARTED", "agent started", { role: "generalist", subtask: "t", tools_available: [] })],
    };
  });

const llm = (ctx: FlowContext) =>
  ctx.step("llm:0", { kind: "llm", name: "m" }, async () => ({ output: "A", events: [llmOutput()] }));

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness("lazy");
});
afterAll(async () => h?.close());

const writtenBy = (taskId: string) => stepWriters(h.pool, taskId);

describe("lazy steps", () => {
  it("are written with the next checkpoint and with the final write, in the same statement", async () => {
    const runs: string[] = [];
    const flow: TaskFlow = async (ctx) => {
      await started(ctx);
      await agentStarted(ctx, runs);
      const a = await llm(ctx);
      await agentFinished(ctx);
      return outcome(a);
    };
    const worker = await h.startWorker(flow);
    try {
      const { taskId } = await h.service.submitTask(submitCommand(h.userId, "lazy steps"));
      await h.waitForStatus(taskId, ["COMPLETED"]);
      const xmin = await writtenBy(taskId);
      expect(Object.keys(xmin).sort()).toEqual(["agent:finish", "agent:start", "finish", "llm:0", "start"]);
      // Three commits where each step had its own before.
      expect(xmin["agent:start"]).toBe(xmin["llm:0"]);
      expect(xmin["agent:finish"]).toBe(xmin.finish);
      expect(new Set(Object.values(xmin)).size).toBe(3);
      const events = await h.events(taskId);
      expectGapFree(events);
      expect(events.map((e) => e.type)).toEqual([
        "WORKFLOW_STARTED",
        "AGENT_STARTED",
        "LLM_OUTPUT",
        "AGENT_COMPLETED",
        "WORKFLOW_COMPLETED",
      ]);
    } finally {
      await worker.stop();
    }
  });

  it("are written before a live event after them is published", async () => {
    const runs: string[] = [];
    const seen: { stepWritten: boolean; thinkingPublished: boolean }[] = [];
    const flow: TaskFlow = async (ctx) => {
      await started(ctx);
      await agentStarted(ctx, runs);
      ctx.emit("AGENT_THINKING", "thinking", { thought: "hm" } as never);
      // Wait until the live event is in the permanent log, then look for the lazy step's row.
      const end = Date.now() + 10_000;
      for (;;) {
        const thinking = await h.pool.query(
          "SELECT 1 FROM task_events WHERE task_id = $1 AND type = 'AGENT_THINKING'",
          [ctx.task.id],
        );
        if (thinking.rowCount || Date.now() > end) break;
        await new Promise((r) => setTimeout(r, 20));
      }
      const row = await h.pool.query("SELECT 1 FROM task_steps WHERE task_id = $1 AND key = 'agent:start'", [
        ctx.task.id,
      ]);
      seen.push({ stepWritten: row.rowCount === 1, thinkingPublished: Date.now() <= end });
      return outcome(await llm(ctx));
    };
    const worker = await h.startWorker(flow);
    try {
      const { taskId } = await h.service.submitTask(submitCommand(h.userId, "lazy then live"));
      await h.waitForStatus(taskId, ["COMPLETED"]);
      expect(seen).toEqual([{ stepWritten: true, thinkingPublished: true }]);
      const events = await h.events(taskId);
      expectGapFree(events);
      expect(events.map((e) => e.type).slice(0, 3)).toEqual(["WORKFLOW_STARTED", "AGENT_STARTED", "AGENT_THINKING"]);
    } finally {
      await worker.stop();
    }
  });

  it("are redone by the next run when the run ended before writing them, keeping seqs gap-free", async () => {
    const runs: string[] = [];
    let attempt = 0;
    const flow: TaskFlow = async (ctx) => {
      attempt = ctx.task.attempt;
      await started(ctx);
      await agentStarted(ctx, runs);
      if (ctx.task.attempt === 1) {
        // The worker shuts down here: the run is handed back with agent:start staged, unwritten.
        await new Promise<never>((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }),
        );
      }
      return outcome(await llm(ctx));
    };
    const first = await h.startWorker(flow);
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "lazy then shutdown"));
    const end = Date.now() + 10_000;
    while (!runs.includes(`${taskId}:agent:start`) && Date.now() < end) await new Promise((r) => setTimeout(r, 20));
    await first.stop();
    expect(Object.keys(await writtenBy(taskId))).toEqual(["start"]);
    const second = await h.startWorker(flow);
    try {
      await h.waitForStatus(taskId, ["COMPLETED"]);
      expect(attempt).toBeGreaterThan(1);
      // Staged by the first run, never written, run again by a later one.
      expect(runs.filter((r) => r.startsWith(taskId)).length).toBeGreaterThanOrEqual(2);
      const events = await h.events(taskId);
      expectGapFree(events);
      expect(events.filter((e) => e.type === "AGENT_STARTED")).toHaveLength(1);
      expect(events.filter((e) => e.type === "WORKFLOW_STARTED")).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});
