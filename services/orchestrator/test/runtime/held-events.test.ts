// Live events are held for one turn of the event loop (event-emitter.ts, docs/performance.md
// "Live events held for one turn"): a step that ends within the turn carries them in its own
// record, written and published with it; a step still running then lets them go, with the
// staged steps when there are any. Real PostgreSQL, JetStream, persister and task flow.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "@tog/catalog";
import { createLlmRouter } from "@tog/providers";
import { taskFlow } from "../../src/flows/index.ts";
import {
  countingBus,
  expectGapFree,
  logger,
  startRuntimeHarness,
  stepWriters,
  submitCommand,
  type RuntimeHarness,
} from "./harness.ts";

let h: RuntimeHarness;
beforeAll(async () => {
  h = await startRuntimeHarness("held-events");
}, 60_000);
afterAll(async () => h?.close());

/** The event types of each step, from the log by the step's seq range (the step row holds no event JSON). */
async function stepEvents(taskId: string): Promise<Record<string, string[]>> {
  const res = await h.pool.query<{ key: string; types: string[] | null }>(
    `SELECT s.key, array_agg(e.type ORDER BY e.seq) FILTER (WHERE e.seq IS NOT NULL) AS types
     FROM task_steps s LEFT JOIN task_events e ON e.task_id = s.task_id AND e.seq BETWEEN s.first_seq AND s.last_seq
     WHERE s.task_id = $1 GROUP BY s.key`,
    [taskId],
  );
  return Object.fromEntries(res.rows.map((r) => [r.key, r.types ?? []]));
}

async function runSimpleTask(worker: Parameters<RuntimeHarness["startWorker"]>[1]) {
  const started = await h.startWorker(taskFlow, worker);
  try {
    const { taskId } = await h.service.submitTask({ ...submitCommand(h.userId, "Say hello"), mode: "simple" });
    expect(await h.waitForStatus(taskId, ["COMPLETED", "FAILED"])).toBe("COMPLETED");
    const events = await h.events(taskId);
    expectGapFree(events);
    return { taskId, events };
  } finally {
    await started.stop();
  }
}

describe("live events held for one turn", () => {
  it("go with the step that ends in the same turn: a simple task is one statement and one message", async () => {
    const counted = countingBus(h.bus);
    const { taskId, events } = await runSimpleTask({ bus: counted.bus });
    // The offline model answers without waiting: its live events are in its step's seq range.
    expect((await stepEvents(taskId))["child:agent/llm:0"]).toEqual([
      "AGENT_THINKING",
      "LLM_PROMPT",
      "LLM_PARTIAL",
      "LLM_PARTIAL",
      "LLM_OUTPUT",
    ]);
    expect(new Set(Object.values(await stepWriters(h.pool, taskId))).size).toBe(1);
    expect(counted.publishes()).toBe(1);
    expect(counted.eventsPublished()).toBe(events.length);
  });

  it("go out while a step that streams over several turns runs, the first with the staged steps", async () => {
    const streaming = createLlmRouter({ catalog: loadCatalog(), apiKeys: {}, logger, offline: { chunkDelayMs: 5 } });
    const counted = countingBus(h.bus);
    const { taskId, events } = await runSimpleTask({ bus: counted.bus, llm: streaming });
    const partials = events.filter((e) => e.type === "LLM_PARTIAL").length;
    expect(partials).toBeGreaterThan(0);
    const recorded = await stepEvents(taskId);
    // Held when the model started, then written with the lazy steps before them.
    expect(recorded["child:agent/agent:start"]).toEqual(["AGENT_STARTED", "AGENT_THINKING", "LLM_PROMPT"]);
    // The first partial went out alone while the model streamed; only the last one, flushed as
    // the stream ended, may go with the output.
    expect(recorded["child:agent/llm:0"]?.at(-1)).toBe("LLM_OUTPUT");
    const recordedPartials = Object.values(recorded)
      .flat()
      .filter((t) => t === "LLM_PARTIAL").length;
    expect(recordedPartials).toBeLessThanOrEqual(1);
    expect(partials - recordedPartials).toBeGreaterThan(0);
    const writers = await stepWriters(h.pool, taskId);
    expect(writers.history).toBe(writers.start);
    expect(writers["child:agent/agent:start"]).toBe(writers.start);
    expect(writers["child:agent/llm:0"]).not.toBe(writers.start);
    // WORKFLOW_STARTED to LLM_PROMPT in one message.
    expect(counted.largestMessage()).toBeGreaterThanOrEqual(4);
    expect(counted.publishes()).toBeLessThan(events.length);
    expect(counted.eventsPublished()).toBe(events.length);
  });
});
