// The task flow's `start` step is lazy (docs/performance.md "Lazy steps"): WORKFLOW_STARTED is
// written with the history and the agent's start in one statement before the first live event
// goes out (held-events.test.ts: a model that streams over several turns), and whichever write
// carries it records the run's mode on the task — for a model that answers within the turn, or
// a run that fails right after its start, the final write.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { taskFlow } from "../../src/flows/index.ts";
import { expectGapFree, startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness("start-step");
  await h.startWorker(taskFlow);
}, 60_000);
afterAll(async () => h?.close());

async function stored(taskId: string) {
  const steps = await h.pool.query<{ key: string; xmin: string }>(
    "SELECT key, xmin::text FROM task_steps WHERE task_id = $1",
    [taskId],
  );
  const task = await h.pool.query<{ mode: string | null }>("SELECT mode FROM tasks WHERE id = $1", [taskId]);
  return { writtenBy: Object.fromEntries(steps.rows.map((r) => [r.key, r.xmin])), mode: task.rows[0]?.mode };
}

describe("the start step", () => {
  it("is written with every step of a simple task in the final write, which records the mode", async () => {
    const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
    expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"])).toBe("COMPLETED");
    const events = await h.events(taskId);
    expectGapFree(events);
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(["WORKFLOW_STARTED", "AGENT_STARTED", "AGENT_THINKING"]);
    const { writtenBy, mode } = await stored(taskId);
    expect(writtenBy.start).toBeDefined();
    expect(writtenBy.history).toBe(writtenBy.start);
    // The offline model answers within the turn: no live event goes out before the final write.
    expect(Object.keys(writtenBy).sort()).toEqual([
      "child:agent",
      "child:agent/agent:finish",
      "child:agent/agent:start",
      "child:agent/llm:0",
      "finish",
      "history",
      "start",
    ]);
    expect(new Set(Object.values(writtenBy)).size).toBe(1);
    expect(mode).toBe("EXECUTION_MODE_SIMPLE");
  });

  it("of a run that fails right after it is written with the final write, which records the mode", async () => {
    const { taskId } = await h.service.submitTask({
      ...submitCommand(h.userId, "Say hello", { context: { role: "pirate" } }),
      mode: "standard",
    });
    expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"])).toBe("FAILED");
    const events = await h.events(taskId);
    expect(events.map((e) => e.type)).toEqual(["WORKFLOW_STARTED", "ERROR_OCCURRED"]);
    const { writtenBy, mode } = await stored(taskId);
    expect(Object.keys(writtenBy).length).toBe(2);
    expect(new Set(Object.values(writtenBy)).size).toBe(1);
    expect(mode).toBe("EXECUTION_MODE_STANDARD");
  });
});
