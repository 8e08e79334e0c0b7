import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { builtinTools, createToolRegistry } from "@tog/tools";
import { taskWorkflow } from "../../src/flows/index.ts";
import { WorkflowFailure } from "../../src/runtime/flow-context.ts";
import { startFakeUpstream, type FakeUpstream } from "./fake-upstream.ts";
import { createMemoryRun, invalidPayloads, type MemoryRunOptions } from "./memory-context.ts";
import { ofType } from "./setup.ts";

let upstream: FakeUpstream;
const tools = createToolRegistry(builtinTools());

beforeAll(async () => {
  upstream = await startFakeUpstream();
});
afterAll(() => upstream.close());

const run = (spec: MemoryRunOptions["spec"], checkpoints?: MemoryRunOptions["checkpoints"]) =>
  createMemoryRun({
    spec,
    catalog: upstream.catalog,
    llm: upstream.router(),
    tools,
    settings: { llmMaxRetries: 1 },
    checkpoints,
  });

describe("LLM failures", () => {
  it("a retried and then replaced model: recoverable ERROR_OCCURRED per failed attempt, ERROR_RECOVERY on success", async () => {
    const r = run({ query: "Hello there", mode: "simple" });
    const { outcome, failure } = await r.run(taskWorkflow);
    expect(failure).toBeUndefined();
    expect(invalidPayloads(r.events)).toEqual([]);
    const errors = ofType(r.events, "ERROR_OCCURRED");
    expect(errors.map((e) => e.data)).toEqual([
      expect.objectContaining({
        error_type: "LLM_ERROR",
        recoverable: true,
        retry_count: 1,
        max_retries: 1,
        severity: "warning",
        retry_after: 0.001,
      }),
      expect.objectContaining({
        error_type: "LLM_ERROR",
        recoverable: true,
        retry_count: 2,
        max_retries: 1,
        severity: "warning",
      }),
    ]);
    expect(errors[1]?.data).not.toHaveProperty("retry_after");
    expect(errors.every((e) => e.agent_id === "generalist" && !e.committed)).toBe(true);
    const recovery = ofType(r.events, "ERROR_RECOVERY");
    expect(recovery.map((e) => e.data)).toEqual([
      { error_type: "LLM_ERROR", recovery_action: "fallback", attempt: 2, max_attempts: 3, success: true },
    ]);
    expect(r.events.indexOf(recovery[0]!)).toBe(r.events.findIndex((e) => e.type === "LLM_OUTPUT") - 1);
    expect(ofType(r.events, "LLM_PROMPT")[0]?.data.model).toBe("flaky-1");
    expect(ofType(r.events, "LLM_OUTPUT")[0]?.data.model).toBe("offline-small");
    expect(outcome).toMatchObject({ modelUsed: "offline-small", provider: "offline" });
  });

  it("a final failure is WorkflowFailure LLM_ERROR with the retry count, replayed without calling again", async () => {
    const r = run({ query: "Hello there", mode: "simple", modelOverride: "flaky-1" });
    const { failure } = await r.run(taskWorkflow);
    expect(failure).toBeInstanceOf(WorkflowFailure);
    expect(failure).toMatchObject({ errorType: "LLM_ERROR", retryCount: 1, maxRetries: 1 });
    expect(ofType(r.events, "ERROR_RECOVERY").map((e) => e.data)).toEqual([
      { error_type: "LLM_ERROR", recovery_action: "retry", attempt: 1, max_attempts: 1, success: false },
    ]);
    expect(r.events.at(-1)).toMatchObject({ type: "AGENT_FAILED", data: { error: "LLM_ERROR", recoverable: false } });
    expect(invalidPayloads(r.events)).toEqual([]);

    const before = upstream.requests();
    const again = run({ query: "Hello there", mode: "simple", modelOverride: "flaky-1" }, r.checkpoints);
    const replay = await again.run(taskWorkflow);
    expect(replay.failure).toMatchObject({
      errorType: "LLM_ERROR",
      retryCount: 1,
      message: (failure as Error).message,
    });
    expect(upstream.requests()).toBe(before);
    expect(again.events).toEqual([]);
  });

  it("complex: a failing subtask emits AGENT_FAILED and fails the task with SUBTASK_FAILED; dependents never start", async () => {
    const r = run({ query: "Plan it", mode: "complex", modelTier: "medium", modelOverride: "picky-1" });
    const { failure } = await r.run(taskWorkflow);
    expect(failure).toBeInstanceOf(WorkflowFailure);
    expect(failure).toMatchObject({ errorType: "SUBTASK_FAILED" });
    expect((failure as Error).message).toMatch(
      /^Subtask task-2 failed: LLM call failed for model picky-1 after 1 attempt: /,
    );
    expect(ofType(r.events, "AGENT_FAILED").map((e) => [e.agent_id, e.data.error])).toEqual([
      ["agent-task-2", "LLM_ERROR"],
    ]);
    expect(r.events.some((e) => e.agent_id === "agent-task-3")).toBe(false);
    expect(invalidPayloads(r.events)).toEqual([]);
  });

  it("supervisor: a failing member retires the team before the task fails", async () => {
    const r = run({ query: "Plan it", mode: "supervisor", modelTier: "medium", modelOverride: "picky-1" });
    const { failure } = await r.run(taskWorkflow);
    expect(failure).toMatchObject({ errorType: "SUBTASK_FAILED" });
    const retired = ofType(r.events, "TEAM_RETIRED");
    expect(retired).toHaveLength(1);
    expect(retired[0]?.data).toMatchObject({ team_size: 3, reason: "task-2 failed; the remaining work was abandoned" });
    expect(invalidPayloads(r.events)).toEqual([]);
  });
});
