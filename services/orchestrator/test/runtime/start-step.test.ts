// The task flow's `start` step is lazy (docs/performance.md "Lazy steps"): WORKFLOW_STARTED is
// written with the history and the agent's start in one statement before the first live event,
// and whichever write carries it records the run's mode on the task — for a run that fails right
// after its start, the final write.
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
  it("is written with the history and the agent's start in one statement, which records the mode", async () => {
    const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
    expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"])).toBe("COMPLETED");
    const events = await h.events(taskId);
    expectGapFree(events);
    expect(events.map((e) => e.type).slice(0, 3)).toEqual(["WORKFLOW_STARTED", "AGENT_STARTED", "AGENT_THINKING"]);
    const { writtenBy, mode } = await stored(taskId);
    expect(writtenBy.start).toBeDefined();
    expect(writtenBy.history).toBe(writtenBy.start);
    expect(Object.entries(writtenBy).filter(([, xmin]) => xmin === writtenBy.start).length).toBe(3);
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
