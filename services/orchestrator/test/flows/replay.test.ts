import { describe, expect, it } from "vitest";
import { taskFlow } from "../../src/flows/index.ts";
import type { Checkpoint } from "./memory-context.ts";
import { counted, memoryRun, timeless } from "./setup.ts";

const CASES = [
  ["simple", "Hello there, who are you?"],
  ["standard", "What is 12*(3+4)?"],
  ["complex", "Research the history of Rome; summarize the economy of Spain. Then write a report comparing them"],
  ["supervisor", "Research the history of Rome; summarize the economy of Spain. Then write a report comparing them"],
] as const;

describe("replay from checkpoints", () => {
  for (const [mode, query] of CASES) {
    it(`${mode}: a second run with the same checkpoints calls no model or tool and emits nothing`, async () => {
      const first = counted();
      const r1 = memoryRun({ spec: { query, mode } }, first);
      const a = await r1.run(taskFlow);
      expect(a.failure).toBeUndefined();
      expect(first.calls.llm).toBeGreaterThan(0);

      const second = counted();
      const r2 = memoryRun({ spec: { query, mode }, checkpoints: r1.checkpoints }, second);
      const b = await r2.run(taskFlow);
      expect(b.failure).toBeUndefined();
      expect(second.calls).toEqual({ llm: 0, tools: 0 });
      expect(r2.events).toEqual([]);
      expect(r2.executed).toEqual([]);
      expect(b.outcome).toEqual(a.outcome);
    });
  }

  it("after a crash, only the steps without a checkpoint run again", async () => {
    const [, query] = CASES[2];
    const r1 = memoryRun({ spec: { query, mode: "complex" } });
    const a = await r1.run(taskFlow);

    // The worker died after subtask 3's model call: its finish, the child record and the synthesis are lost.
    const kept = new Map<string, Checkpoint>(
      [...r1.checkpoints].filter(
        ([key]) => !["child:subtask:task-3", "child:subtask:task-3/agent:finish", "synthesis"].includes(key),
      ),
    );
    const deps = counted();
    const r2 = memoryRun({ spec: { query, mode: "complex" }, checkpoints: kept }, deps);
    const b = await r2.run(taskFlow);
    expect(deps.calls).toEqual({ llm: 1, tools: 0 });
    expect(r2.executed).toEqual(["child:subtask:task-3/agent:finish", "child:subtask:task-3", "synthesis"]);
    expect(r2.events.filter((e) => e.committed).map((e) => `${e.agent_id}:${e.type}`)).toEqual([
      "agent-task-3:AGENT_COMPLETED",
      "orchestrator:PROGRESS",
      "orchestrator:LLM_OUTPUT",
    ]);
    expect(b.outcome).toEqual(a.outcome);
  });

  it("step keys are deterministic and namespaced per child", async () => {
    const [, query] = CASES[2];
    const r = memoryRun({ spec: { query, mode: "complex" } });
    await r.run(taskFlow);
    expect([...r.checkpoints.keys()].sort()).toEqual(
      [
        "start",
        "history",
        "plan",
        ...[1, 2, 3].flatMap((n) => [
          `child:subtask:task-${n}`,
          `child:subtask:task-${n}/agent:start`,
          `child:subtask:task-${n}/llm:0`,
          `child:subtask:task-${n}/agent:finish`,
        ]),
        "synthesis",
      ].sort(),
    );
  });
});

describe("determinism", () => {
  for (const [mode, query] of CASES) {
    it(`${mode}: the same query gives the same events (timing aside) and outcome`, async () => {
      const r1 = memoryRun({ spec: { query, mode } });
      const r2 = memoryRun({ spec: { query, mode } });
      const a = await r1.run(taskFlow);
      const b = await r2.run(taskFlow);
      expect(timeless(r2.events)).toEqual(timeless(r1.events));
      expect(b.outcome).toEqual(a.outcome);
    });
  }
});
