import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { publishSessionChanged, systemSubjects } from "@tog/bus";
import type { TaskFlow } from "../../src/runtime/flow-context.ts";
import { outcome, startRuntimeHarness, submitCommand, type RuntimeHarness } from "../runtime/harness.ts";

// Session cache hints (docs/decisions.md "Sessions", Cache): the submit into an existing session
// and a run's final write hint the session only when `views_cached` is set, which the session
// service does before it caches anything of the session. Hints travel on the harness's one NATS
// connection, so a marker published after an action arrives after any hint the action sent.

describe("session cache hints", () => {
  let h: RuntimeHarness;
  const hinted: string[] = [];
  let finished = 0;
  /** A task whose query is "held" ends only once the test opens this gate. */
  let openGate = () => {};
  const gate = new Promise<void>((resolve) => {
    openGate = resolve;
  });
  let heldStarted = false;
  // No checkpoint before the final write, as a simple task's run (a run's first checkpoint, which
  // records its mode, hints in any case: its statement does not lock the session row).
  const task: TaskFlow = async (ctx) => {
    if (ctx.task.spec.query === "held") {
      heldStarted = true;
      await gate;
    }
    return outcome(`done ${ctx.task.spec.query}`);
  };

  beforeAll(async () => {
    h = await startRuntimeHarness("hints");
    h.bus.nc.subscribe(systemSubjects(h.bus.prefix).sessionChanges, {
      callback: (_err, msg) => {
        hinted.push(msg.string());
      },
    });
    await h.startWorker(task, {
      onTaskFinished: () => {
        finished++;
      },
    });
  });
  afterAll(async () => h?.close());

  /** The hints sent until now (every one of them: a marker sent after them has come back). */
  async function hintsSoFar(): Promise<string[]> {
    const marker = `marker-${hinted.length}-${Date.now()}`;
    publishSessionChanged(h.bus, marker);
    for (let i = 0; i < 200 && !hinted.includes(marker); i++) await new Promise((r) => setTimeout(r, 10));
    expect(hinted).toContain(marker);
    return hinted.filter((id) => !id.startsWith("marker-"));
  }

  /** Submits into the session and waits until the run has finished, hint included. */
  async function runInSession(sessionId: string, query: string): Promise<void> {
    const before = finished;
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, query, { sessionId }));
    await h.waitForStatus(taskId, ["COMPLETED"]);
    for (let i = 0; i < 200 && finished === before; i++) await new Promise((r) => setTimeout(r, 10));
    expect(finished).toBeGreaterThan(before);
  }

  const marked = async (sessionId: string) =>
    (await h.pool.query("SELECT views_cached FROM sessions WHERE id = $1", [sessionId])).rows[0].views_cached;

  it("a session whose views nobody cached is not hinted: not by a submit into it, not by a run's final write", async () => {
    const first = await h.service.submitTask(submitCommand(h.userId, "first"));
    await h.waitForStatus(first.taskId, ["COMPLETED"]);
    await runInSession(first.sessionId, "second");
    expect(await marked(first.sessionId)).toBe(false);
    expect(await hintsSoFar()).not.toContain(first.sessionId);
  });

  it("once the session service marks the session, the submit and the final write each hint it", async () => {
    const first = await h.service.submitTask(submitCommand(h.userId, "first"));
    await h.waitForStatus(first.taskId, ["COMPLETED"]);
    // What the session service does before it caches a view (libs/task-data markViewsCached).
    await h.pool.query("UPDATE sessions SET views_cached = true WHERE id = $1", [first.sessionId]);
    const before = (await hintsSoFar()).length;
    await runInSession(first.sessionId, "second");
    const hints = (await hintsSoFar()).slice(before);
    expect(hints).toEqual([first.sessionId, first.sessionId]);
  });

  it("the final write reads the mark as the session service's own statement left it", async () => {
    const first = await h.service.submitTask(submitCommand(h.userId, "first"));
    await h.waitForStatus(first.taskId, ["COMPLETED"]);
    const { taskId } = await h.service.submitTask(submitCommand(h.userId, "held", { sessionId: first.sessionId }));
    for (let i = 0; i < 500 && !heldStarted; i++) await new Promise((r) => setTimeout(r, 10));
    expect(heldStarted).toBe(true);
    // A session service marking the session while the run is under way: the mark holds the row
    // until its commit, and the final write that waits for it must see it.
    const client = await h.pool.connect();
    let open = false;
    try {
      await client.query("BEGIN");
      open = true;
      await client.query("UPDATE sessions SET views_cached = true WHERE id = $1", [first.sessionId]);
      const before = finished;
      openGate();
      await new Promise((r) => setTimeout(r, 300));
      expect(finished).toBe(before); // the final write waits for the row
      await client.query("COMMIT");
      open = false;
      await h.waitForStatus(taskId, ["COMPLETED"]);
      for (let i = 0; i < 200 && finished === before; i++) await new Promise((r) => setTimeout(r, 10));
      expect(finished).toBeGreaterThan(before);
    } finally {
      // A failed assertion must not leave the row locked for the rest of the file.
      if (open) await client.query("ROLLBACK");
      openGate();
      client.release();
    }
    expect(await hintsSoFar()).toContain(first.sessionId);
  });
});
