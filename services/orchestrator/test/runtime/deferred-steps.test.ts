import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { FlowContext, TaskFlow } from "../../src/runtime/flow-context.ts";
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

// Deferred steps (flow-context.ts, docs/performance.md "Deferred checkpoints"): a model call's
// checkpoint goes with the next write — the final write when nothing with effects follows —
// but is written before a later step with effects starts, and before a shut-down run hands
// the task back.

/** A model call's step, deferred as flows/model-call.ts makes it; counts its runs per task. */
const llm = (ctx: FlowContext, calls: string[]) =>
  ctx.step("llm:0", { kind: "llm", name: "m", deferred: true }, async () => {
    calls.push(ctx.task.id);
    return { output: "A", events: [llmOutput()] };
  });

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness("deferred");
});
afterAll(async () => h?.close());

const writtenBy = (taskId: string) => stepWriters(h.pool, taskId);

async function waitFor(check: () => boolean, what: string): Promise<void> {
  const end = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("deferred steps", () => {
  it("go with the final write when no step with effects follows", async () => {
    const calls: string[] = [];
    const flow: TaskFlow = async (ctx) => {
      await started(ctx);
      const a = await llm(ctx, calls);
      await agentFinished(ctx);
      return outcome(a);
    };
    const worker = await h.startWorker(flow);
    try {
      const { taskId } = await h.service.submitTask(submitCommand(h.userId, "deferred"));
      await h.waitForStatus(taskId, ["COMPLETED"]);
      const xmin = await writtenBy(taskId);
      expect(Object.keys(xmin).sort()).toEqual(["agent:finish", "finish", "llm:0", "start"]);
      expect(xmin["llm:0"]).toBe(xmin.finish);
      expect(xmin.start).not.toBe(xmin.finish);
      const events = await h.events(taskId);
      expectGapFree(events);
      expect(events.map((e) => e.type)).toEqual([
        "WORKFLOW_STARTED",
        "LLM_OUTPUT",
        "AGENT_COMPLETED",
        "WORKFLOW_COMPLETED",
      ]);
    } finally {
      await worker.stop();
    }
  });

  it("are written before a later step with effects starts", async () => {
    const calls: string[] = [];
    const seen: boolean[] = [];
    const flow: TaskFlow = async (ctx) => {
      await started(ctx);
      const a = await llm(ctx, calls);
      await ctx.step("tool:0", { kind: "tool", name: "t" }, async () => {
        const row = await h.pool.query("SELECT 1 FROM task_steps WHERE task_id = $1 AND key = 'llm:0'", [ctx.task.id]);
        seen.push(row.rowCount === 1);
        return { output: "effect" };
      });
      return outcome(a);
    };
    const worker = await h.startWorker(flow);
    try {
      const { taskId } = await h.service.submitTask(submitCommand(h.userId, "deferred then effect"));
      await h.waitForStatus(taskId, ["COMPLETED"]);
      expect(seen).toEqual([true]);
      const xmin = await writtenBy(taskId);
      expect(xmin["llm:0"]).not.toBe(xmin["tool:0"]);
      const events = await h.events(taskId);
      expectGapFree(events);
      expect(events.map((e) => e.type)).toEqual(["WORKFLOW_STARTED", "LLM_OUTPUT", "WORKFLOW_COMPLETED"]);
    } finally {
      await worker.stop();
    }
  });

  it("are written when the worker shuts down, so the next run does not call the model again", async () => {
    const calls: string[] = [];
    const flow: TaskFlow = async (ctx) => {
      await started(ctx);
      const a = await llm(ctx, calls);
      if (ctx.task.attempt === 1) {
        // The worker shuts down here, with llm:0 staged.
        await new Promise<never>((_, reject) =>
          ctx.signal.addEventListener("abort", () => reject(ctx.signal.reason), { once: true }),
        );
      }
      await agentFinished(ctx);
      return outcome(a);
    };
    const first = await h.startWorker(flow);
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "deferred then shutdown"));
    await waitFor(() => calls.includes(taskId), "the model call");
    await first.stop();
    expect(Object.keys(await writtenBy(taskId)).sort()).toEqual(["llm:0", "start"]);
    const second = await h.startWorker(flow);
    try {
      await h.waitForStatus(taskId, ["COMPLETED"]);
      expect(calls.filter((id) => id === taskId)).toHaveLength(1);
      const events = await h.events(taskId);
      expectGapFree(events);
      expect(events.filter((e) => e.type === "LLM_OUTPUT")).toHaveLength(1);
    } finally {
      await second.stop();
    }
  });
});
