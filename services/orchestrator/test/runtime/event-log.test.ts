// Every event is in the permanent log before it is on the bus (docs/performance.md "The log
// before the bus"): a step's events go into task_events with the step, a live event that goes
// out on its own is logged under the run's lease first, and a later run publishes what an
// earlier one logged but did not publish. No event persister runs here. Real PostgreSQL,
// JetStream and task flow.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import { systemSubjects } from "@tog/bus";
import { loadCatalog } from "@tog/catalog";
import { buildEvent, eventTextsOf, type TaskEvent } from "@tog/events";
import { eventTextsOnBus } from "@tog/testkit";
import { createLlmRouter } from "@tog/providers";
import { taskFlow } from "../../src/flows/index.ts";
import { openEmitter } from "../../src/runtime/open-emitter.ts";
import { expectGapFree, logger, startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness("event-log");
}, 60_000);
afterAll(async () => h?.close());

/** The task's events on the bus, in stream order: seq and the text as sent. */
async function onBus(taskId: string): Promise<Map<number, string>> {
  const texts = await eventTextsOnBus(h.bus, taskId);
  return new Map(texts.map((text) => [(JSON.parse(text) as { seq: number }).seq, text]));
}

/** The task's events in the log, by seq, as stored. */
async function inLog(taskId: string): Promise<Map<number, string>> {
  const res = await h.pool.query<{ seq: number; event: string }>(
    "SELECT seq, event::text AS event FROM task_events WHERE task_id = $1 ORDER BY seq",
    [taskId],
  );
  return new Map(res.rows.map((r) => [r.seq, r.event]));
}

/** AGENT_THINKING events of the task with these seqs, made at `at` (default now). */
function thoughts(taskId: string, seqs: number[], at?: number): TaskEvent[] {
  return seqs.map((seq) =>
    buildEvent({
      workflow_id: taskId,
      type: "AGENT_THINKING",
      agent_id: "agent",
      message: `thought ${seq}`,
      seq,
      trace_id: "0".repeat(32),
      data: { thought: `t${seq}` } as never,
      at,
    }),
  );
}

const slowModel = (chunkDelayMs: number) =>
  createLlmRouter({ catalog: loadCatalog(), apiKeys: {}, logger, offline: { chunkDelayMs } });

describe("the log before the bus", () => {
  it("a finished task's events are in the log when its status is final, as the bus carries them", async () => {
    const worker = await h.startWorker(taskFlow);
    try {
      const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
      expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"])).toBe("COMPLETED");
      // Read at once: no persister runs, and nothing waits for one.
      const logged = await inLog(taskId);
      expect([...logged.keys()]).toEqual(Array.from({ length: logged.size }, (_, i) => i + 1));
      expect(JSON.parse(logged.get(logged.size)!).type).toBe("WORKFLOW_COMPLETED");
      const bus = await onBus(taskId);
      expect(bus).toEqual(logged);
    } finally {
      await worker.stop();
    }
  });

  it("each step's record names its events in the log by seq range, and holds no copy of them", async () => {
    // A model that answers within the turn (one final write) and one that streams (a staged write
    // before its live events, then the final write): the statement that writes a step writes its
    // events into the log, and the step keeps only their range (docs/performance.md "Each
    // event's JSON once").
    for (const llm of [undefined, slowModel(30)]) {
      const worker = await h.startWorker(taskFlow, llm ? { llm } : {});
      try {
        const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
        expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"])).toBe("COMPLETED");
        const logged = await inLog(taskId);
        const steps = await h.pool.query<{
          key: string;
          events: string | null;
          first_seq: number | null;
          last_seq: number | null;
        }>(
          "SELECT key, events::text AS events, first_seq, last_seq FROM task_steps WHERE task_id = $1 ORDER BY first_seq",
          [taskId],
        );
        expect(steps.rows.every((r) => r.events === null)).toBe(true);
        const ranged = steps.rows.filter((r) => r.first_seq !== null);
        expect(ranged.length).toBeGreaterThanOrEqual(3);
        const inSteps: number[] = [];
        for (const row of ranged) {
          for (let seq = row.first_seq!; seq <= row.last_seq!; seq++) {
            expect(logged.has(seq), `seq ${seq} of step ${row.key}`).toBe(true);
            inSteps.push(seq);
          }
        }
        expect(new Set(inSteps).size).toBe(inSteps.length);
        // Answered within the turn, every event went with a step: the ranges cover the log.
        if (!llm) expect(inSteps.sort((a, b) => a - b)).toEqual([...logged.keys()]);
      } finally {
        await worker.stop();
      }
    }
  });

  it("a live event that goes out on its own is in the log by the time it is on the bus", async () => {
    const worker = await h.startWorker(taskFlow, { llm: slowModel(400) });
    const subject = systemSubjects(h.bus.prefix).events("*");
    const checks: Promise<{ seq: number; data: string; logged: string | undefined }>[] = [];
    const sub = h.bus.nc.subscribe(subject, {
      callback: (_err, msg) => {
        for (const text of eventTextsOf(msg.string())) {
          const event = JSON.parse(text) as TaskEvent;
          if (event.type !== "LLM_PARTIAL") continue;
          // The model waits 400 ms between chunks: no later write of the run can have logged it yet.
          checks.push(
            h.pool
              .query<{ event: string }>(
                "SELECT event::text AS event FROM task_events WHERE task_id = $1 AND seq = $2",
                [event.workflow_id, event.seq],
              )
              .then((r) => ({ seq: event.seq, data: text, logged: r.rows[0]?.event })),
          );
        }
      },
    });
    try {
      const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
      expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"], 20_000)).toBe("COMPLETED");
      const seen = await Promise.all(checks);
      expect(seen.length).toBeGreaterThan(0);
      for (const s of seen) expect(s.logged, `seq ${s.seq}`).toBe(s.data);
      expectGapFree(await h.events(taskId));
      expect(await onBus(taskId)).toEqual(await inLog(taskId));
    } finally {
      sub.unsubscribe();
      await worker.stop();
    }
  });

  it("a run whose lease was taken puts no further live event on the bus, and the task still completes", async () => {
    const worker = await h.startWorker(taskFlow, { llm: slowModel(300) });
    try {
      const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
      // Wait for the first partial on the bus, then take the lease away as another worker would.
      for (let i = 0; ; i++) {
        const types = [...(await onBus(taskId)).values()].map((d) => (JSON.parse(d) as TaskEvent).type);
        if (types.includes("LLM_PARTIAL")) break;
        if (i > 400) throw new Error("no partial on the bus");
        await new Promise((r) => setTimeout(r, 10));
      }
      await h.pool.query("UPDATE tasks SET lease_owner = 'another-worker' WHERE id = $1", [taskId]);
      await new Promise((r) => setTimeout(r, 1_000));
      // Whatever reached the bus is in the log, character for character.
      const bus = await onBus(taskId);
      const logged = await inLog(taskId);
      for (const [seq, data] of bus) expect(logged.get(seq), `seq ${seq}`).toBe(data);
      // The lease expires; the task runs again and ends gap-free, log and bus alike.
      expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"], 20_000)).toBe("COMPLETED");
      expectGapFree(await h.events(taskId));
      expect(await onBus(taskId)).toEqual(await inLog(taskId));
    } finally {
      await worker.stop();
    }
  });

  it("a later run publishes what an earlier one logged but did not publish; not what the bus aged out", async () => {
    const hour = 3_600_000;
    const cases = [
      { age: 0, republished: [1, 2, 3] },
      { age: 2 * hour, republished: [] },
    ];
    for (const c of cases) {
      const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
      const claim = await h.runs.claim(taskId, "w-earlier", 60_000, 60);
      expect(claim.outcome).toBe("claimed");
      const events = thoughts(taskId, [1, 2, 3], Date.now() - c.age);
      // Logged under the lease, then the worker died before publishing.
      await h.runs.logEvents(taskId, "w-earlier", events);
      const failures: Error[] = [];
      const emitter = await openEmitter(
        { bus: h.bus, runs: h.runs, eventsMaxAgeMs: hour },
        taskId,
        "0".repeat(32),
        new Map(),
        logger,
        (err) => failures.push(err),
      );
      expect(failures).toEqual([]);
      const bus = await onBus(taskId);
      expect([...bus.keys()]).toEqual(c.republished);
      const logged = await inLog(taskId);
      for (const [seq, data] of bus) expect(data).toBe(logged.get(seq));
      // New events continue after everything logged, whether sent again or not.
      expect(emitter.lastSeq).toBe(3);
    }
  });

  it("a step an earlier release wrote with its events in the row, none in the log: they go out once", async () => {
    const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
    expect((await h.runs.claim(taskId, "w-old-release", 60_000, 60)).outcome).toBe("claimed");
    const events = thoughts(taskId, [1, 2]);
    // As releases before "Each event's JSON once" wrote a step: the events in the row only.
    await h.pool.query(
      `INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, output, events, first_seq, last_seq, started_at, completed_at)
       VALUES ($1, 'old', 'llm', 'old', 'agent', 'completed', 'null', $2::json, 1, 2, now(), now())`,
      [taskId, JSON.stringify(events)],
    );
    const steps = new Map((await h.runs.loadSteps(taskId)).map((s) => [s.key, s]));
    const failures: Error[] = [];
    const emitter = await openEmitter({ bus: h.bus, runs: h.runs }, taskId, "0".repeat(32), steps, logger, (err) =>
      failures.push(err),
    );
    expect(failures).toEqual([]);
    const bus = await onBus(taskId);
    expect([...bus.keys()]).toEqual([1, 2]);
    expect(JSON.parse(bus.get(2)!)).toMatchObject({ seq: 2, message: "thought 2" });
    expect(emitter.lastSeq).toBe(2);
  });

  it("a live event of a run that does not hold the lease is refused by the log", async () => {
    const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
    expect((await h.runs.claim(taskId, "w-holder", 60_000, 60)).outcome).toBe("claimed");
    const event = buildEvent({
      workflow_id: taskId,
      type: "AGENT_THINKING",
      agent_id: "agent",
      message: "stale",
      seq: 1,
      trace_id: "0".repeat(32),
      data: { thought: "t" } as never,
    });
    await expect(h.runs.logEvents(taskId, `w-stale-${randomUUID()}`, [event])).rejects.toThrow(/lease/i);
    expect((await inLog(taskId)).size).toBe(0);
  });
});
