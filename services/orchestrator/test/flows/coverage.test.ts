import { afterAll, beforeAll, expect, it } from "vitest";
import { EVENT_TYPES, type EventType } from "@tog/events";
import { builtinTools, createToolRegistry } from "@tog/tools";
import { taskFlow } from "../../src/flows/index.ts";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { createMemoryRun, invalidPayloads, type MemoryRun } from "./memory-context.ts";
import { memoryRun } from "./setup.ts";

// Every event type is emitted by some flow, except the ones the runtime emits itself.
const RUNTIME_ONLY: readonly EventType[] = ["WORKFLOW_COMPLETED", "APPROVAL_REQUESTED", "APPROVAL_DECISION", "WAITING"];

let upstream: FakeUpstream;
beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

it("the flows together emit every event type but the runtime's", async () => {
  const runs: MemoryRun[] = [
    memoryRun({
      spec: {
        query: "Research the history of Rome; summarize the economy of Spain. Then write a report comparing them",
        mode: "supervisor",
      },
    }),
    memoryRun({ spec: { query: "What is 1/0?", mode: "standard" }, history: [{ role: "user", content: "earlier" }] }),
    memoryRun({ spec: { query: "What is 12*(3+4)?", mode: "standard" } }),
    createMemoryRun({
      spec: { query: "Hello", mode: "simple" },
      catalog: upstream.catalog,
      llm: upstream.router(),
      tools: createToolRegistry(builtinTools()),
    }),
    createMemoryRun({
      spec: { query: "Plan it", mode: "complex", modelTier: "medium", modelOverride: "picky-1" },
      catalog: upstream.catalog,
      llm: upstream.router(),
      tools: createToolRegistry(builtinTools()),
    }),
  ];
  const seen = new Set<EventType>();
  for (const r of runs) {
    await r.run(taskFlow);
    expect(invalidPayloads(r.events)).toEqual([]);
    for (const e of r.events) seen.add(e.type);
  }
  expect([...seen].sort()).toEqual(EVENT_TYPES.filter((t) => !RUNTIME_ONLY.includes(t)).sort());
});
