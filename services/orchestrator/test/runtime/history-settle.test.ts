import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

// GET /tasks/{id}/events right after the task's final status: the final write commits before the
// event persister has stored the terminal event, and the read must still return the whole history
// (docs/decisions.md "Event history after the final status"). Here the final status is written
// by hand and the terminal event stored late, as a slow persister would.

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness("settle");
});
afterAll(async () => h?.close());

async function storeEvent(taskId: string, seq: number, type: string, data: Record<string, unknown> = {}) {
  const event = { workflow_id: taskId, seq, type, agent_id: "orchestrator", message: type, data, timestamp: "x" };
  await h.pool.query(
    `INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event) VALUES ($1, $2, $3, 'orchestrator', now(), $4::json)`,
    [taskId, seq, type, JSON.stringify(event)],
  );
}

async function taskWithStatus(status: string, finishedAgoMs: number | null): Promise<string> {
  const { taskId } = await h.service.submitTask(submitCommand(h.userId, `settle ${status}`));
  await h.pool.query(
    "UPDATE tasks SET status = $2, completed_at = CASE WHEN $3::int IS NULL THEN NULL ELSE now() - make_interval(secs => $3::int / 1000.0) END WHERE id = $1",
    [taskId, status, finishedAgoMs],
  );
  await storeEvent(taskId, 1, "WORKFLOW_STARTED");
  return taskId;
}

const read = (taskId: string) => h.service.getTaskEvents({ userId: h.userId, taskId, limit: 50, offset: 0 });
const types = (events: string[]) => events.map((e) => (JSON.parse(e) as { type: string }).type);

describe("the event history of a task that just finished", () => {
  it("waits for the terminal event the persister has not stored yet", async () => {
    const taskId = await taskWithStatus("COMPLETED", 0);
    setTimeout(() => void storeEvent(taskId, 2, "WORKFLOW_COMPLETED"), 150);
    const started = Date.now();
    const page = await read(taskId);
    expect(types(page.events)).toEqual(["WORKFLOW_STARTED", "WORKFLOW_COMPLETED"]);
    expect(page.totalCount).toBe(2);
    expect(Date.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("knows a failure's terminal event (ERROR_OCCURRED, terminal) as the end too", async () => {
    const taskId = await taskWithStatus("FAILED", 0);
    setTimeout(
      () => void storeEvent(taskId, 2, "ERROR_OCCURRED", { terminal: true, status: "FAILED", error_type: "x" }),
      100,
    );
    expect(types((await read(taskId)).events)).toEqual(["WORKFLOW_STARTED", "ERROR_OCCURRED"]);
  });

  it("does not wait for a task still running, nor for one that finished long ago", async () => {
    for (const taskId of [await taskWithStatus("RUNNING", null), await taskWithStatus("COMPLETED", 60_000)]) {
      const started = Date.now();
      expect(types((await read(taskId)).events)).toEqual(["WORKFLOW_STARTED"]);
      expect(Date.now() - started).toBeLessThan(500);
    }
  });

  it("waits no longer than its bound when the terminal event never comes", async () => {
    const taskId = await taskWithStatus("CANCELLED", 0);
    const started = Date.now();
    expect(types((await read(taskId)).events)).toEqual(["WORKFLOW_STARTED"]);
    const waited = Date.now() - started;
    expect(waited).toBeGreaterThanOrEqual(900);
    expect(waited).toBeLessThan(3_000);
  });
});
