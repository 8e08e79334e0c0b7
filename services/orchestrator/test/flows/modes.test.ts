import { describe, expect, it } from "vitest";
import { estimateComplexity } from "@tog/providers";
import { PARTIAL_MIN_CHARS, taskFlow } from "../../src/flows/index.ts";
import { invalidPayloads, type RecordedEvent } from "./memory-context.ts";
import { byAgent, counted, memoryRun, offlineRouter, ofType, shape } from "./setup.ts";

const PARALLEL = "Research the history of Rome; summarize the economy of Spain";
const SEQUENTIAL = "Research the history of Rome; summarize the economy of Spain. Then write a report comparing them";

function expectValid(events: readonly RecordedEvent[]) {
  expect(invalidPayloads(events)).toEqual([]);
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
}

describe("simple mode", () => {
  it("one model call: AGENT_STARTED, AGENT_THINKING, LLM_PROMPT, LLM_PARTIAL…, LLM_OUTPUT, AGENT_COMPLETED", async () => {
    const deps = counted();
    const r = memoryRun({ spec: { query: "Hello there, who are you?", mode: "simple" }, sessionId: "s-1" }, deps);
    const { outcome, failure } = await r.run(taskFlow);
    expect(failure).toBeUndefined();
    expectValid(r.events);
    expect(shape(r.events)).toEqual([
      "orchestrator:WORKFLOW_STARTED",
      "generalist:AGENT_STARTED",
      "generalist:AGENT_THINKING",
      "generalist:LLM_PROMPT",
      "generalist:LLM_PARTIAL*",
      "generalist:LLM_OUTPUT",
      "generalist:AGENT_COMPLETED",
    ]);
    expect(r.events[0]).toMatchObject({
      seq: 1,
      type: "WORKFLOW_STARTED",
      data: {
        query: "Hello there, who are you?",
        mode: "simple",
        session_id: "s-1",
        estimated_complexity: estimateComplexity("Hello there, who are you?").complexity_score,
      },
    });
    expect(ofType(r.events, "AGENT_STARTED")[0]?.data).toEqual({
      role: "generalist",
      subtask: "Hello there, who are you?",
      tools_available: [],
    });

    const output = ofType(r.events, "LLM_OUTPUT")[0] as RecordedEvent;
    const partials = ofType(r.events, "LLM_PARTIAL");
    expect(partials.map((p) => p.data.chunk).join("")).toBe(output.data.output);
    expect(partials.map((p) => p.data.chunk_index)).toEqual(partials.map((_, i) => i));
    for (const p of partials.slice(0, -1))
      expect((p.data.chunk as string).length).toBeGreaterThanOrEqual(PARTIAL_MIN_CHARS);
    const tokens = partials.map((p) => p.data.total_tokens_so_far as number);
    expect([...tokens].sort((a, b) => a - b)).toEqual(tokens);
    expect(output.data).toMatchObject({ model: "offline-small", cost_usd: 0 });

    const prompt = ofType(r.events, "LLM_PROMPT")[0]?.data;
    expect(prompt).toMatchObject({ model: "offline-small", temperature: 1 });
    expect(prompt?.sanitized_prompt).toContain("[user] Hello there, who are you?");

    const completed = ofType(r.events, "AGENT_COMPLETED")[0]?.data;
    expect(completed).toMatchObject({ result: outcome?.result, tokens_used: output.data.tokens_used, cost_usd: 0 });
    expect(outcome).toMatchObject({
      modelUsed: "offline-small",
      provider: "offline",
      agentsUsed: 1,
      toolsInvoked: 0,
      mode: "EXECUTION_MODE_SIMPLE",
    });
    expect(outcome?.usage.totalTokens).toBe(output.data.tokens_used);
    expect(outcome?.result).toContain("Offline answer");
    expect(deps.calls).toEqual({ llm: 1, tools: 0 });

    // Result-reporting events are committed with checkpoints; progress is live.
    const committed = new Set(r.events.filter((e) => e.committed).map((e) => e.type));
    expect([...committed].sort()).toEqual(["AGENT_COMPLETED", "AGENT_STARTED", "LLM_OUTPUT", "WORKFLOW_STARTED"]);
  });

  it("detects the mode from the complexity estimate when none is requested", async () => {
    for (const [query, mode] of [
      ["Hello there", "simple"],
      ["What is 12*(3+4)?", "standard"],
      [SEQUENTIAL, "complex"],
    ] as const) {
      const r = memoryRun({ spec: { query } });
      const { outcome } = await r.run(taskFlow);
      expect(estimateComplexity(query).mode).toBe(mode);
      expect(r.events[0]?.data).toMatchObject({
        mode,
        estimated_complexity: estimateComplexity(query).complexity_score,
      });
      expect(outcome?.mode).toBe(`EXECUTION_MODE_${mode.toUpperCase()}`);
    }
  });
});

describe("standard mode", () => {
  it("calls the calculator through the registry and answers from its result", async () => {
    const deps = counted();
    const r = memoryRun({ spec: { query: "What is 12*(3+4)?", mode: "standard" } }, deps);
    const { outcome } = await r.run(taskFlow);
    expectValid(r.events);
    expect(shape(r.events)).toEqual([
      "orchestrator:WORKFLOW_STARTED",
      "generalist:AGENT_STARTED",
      "generalist:AGENT_THINKING",
      "generalist:LLM_PROMPT",
      "generalist:LLM_OUTPUT",
      "generalist:TOOL_INVOKED",
      "generalist:TOOL_OBSERVATION",
      "generalist:AGENT_THINKING",
      "generalist:LLM_PROMPT",
      "generalist:LLM_PARTIAL*",
      "generalist:LLM_OUTPUT",
      "generalist:AGENT_COMPLETED",
    ]);
    expect(ofType(r.events, "AGENT_STARTED")[0]?.data.tools_available).toEqual([
      "calculator",
      "datetime",
      "json",
      "text",
    ]);
    expect(ofType(r.events, "TOOL_INVOKED")[0]?.data).toEqual({
      tool_name: "calculator",
      tool_args: { expression: "12*(3+4)" },
      timeout_seconds: 5,
    });
    const observation = ofType(r.events, "TOOL_OBSERVATION")[0]?.data;
    expect(observation).toMatchObject({ tool_name: "calculator" });
    expect(JSON.stringify(observation?.result)).toContain("84");
    expect(ofType(r.events, "TOOL_INVOKED")[0]?.committed).toBe(false);
    expect(ofType(r.events, "TOOL_OBSERVATION")[0]?.committed).toBe(true);
    expect(outcome).toMatchObject({ toolsInvoked: 1, agentsUsed: 1, mode: "EXECUTION_MODE_STANDARD" });
    expect(outcome?.result).toContain("84");
    expect(deps.calls).toEqual({ llm: 2, tools: 1 });
  });

  it("uses datetime and json for date and JSON questions", async () => {
    const dates = memoryRun({
      spec: { query: "How many days are between 2024-01-01 and 2024-03-01?", mode: "standard" },
    });
    const d = await dates.run(taskFlow);
    expectValid(dates.events);
    expect(ofType(dates.events, "TOOL_INVOKED")[0]?.data).toMatchObject({
      tool_name: "datetime",
      tool_args: { from: "2024-01-01", to: "2024-03-01" },
    });
    expect(ofType(dates.events, "TOOL_OBSERVATION")[0]?.data.result).toMatchObject({ difference: { days: 60 } });
    expect(d.outcome?.result).toContain("60 days");

    const json = memoryRun({ spec: { query: 'Format this JSON: {"b":1,"a":[1,2]}', mode: "standard" } });
    const j = await json.run(taskFlow);
    expectValid(json.events);
    expect(ofType(json.events, "TOOL_INVOKED")[0]?.data).toMatchObject({
      tool_name: "json",
      tool_args: { operation: "format" },
    });
    expect(ofType(json.events, "TOOL_OBSERVATION")[0]?.data.result).toEqual({
      formatted: JSON.stringify({ b: 1, a: [1, 2] }, null, 2),
    });
    expect(j.outcome?.toolsInvoked).toBe(1);
  });

  it("reports a failed tool as a recoverable ERROR_OCCURRED and tells the model", async () => {
    const r = memoryRun({ spec: { query: "What is 1/0?", mode: "standard" } });
    const { outcome, failure } = await r.run(taskFlow);
    expect(failure).toBeUndefined();
    expectValid(r.events);
    const errors = ofType(r.events, "ERROR_OCCURRED");
    expect(errors).toHaveLength(1);
    expect(errors[0]?.data).toEqual({
      error_type: "TOOL_EXECUTION_FAILED",
      error_message: "calculator: Division by zero",
      recoverable: true,
      retry_count: 0,
      max_retries: 0,
      severity: "warning",
    });
    expect(ofType(r.events, "TOOL_OBSERVATION")).toHaveLength(0);
    expect(outcome?.result).toContain("Division by zero");
    expect(outcome?.toolsInvoked).toBe(1);
  });

  it("offers only the role's tools", async () => {
    const r = memoryRun({ spec: { query: "What is 12*(3+4)?", mode: "standard", role: "writer" } });
    const { outcome } = await r.run(taskFlow);
    expect(ofType(r.events, "AGENT_STARTED")[0]).toMatchObject({
      agent_id: "writer",
      data: { role: "writer", tools_available: ["text", "datetime"] },
    });
    expect(ofType(r.events, "TOOL_INVOKED")).toHaveLength(0);
    expect(outcome?.toolsInvoked).toBe(0);
  });

  it("stops offering tools after maxToolIterations rounds", async () => {
    const r = memoryRun({ spec: { query: "What is 12*(3+4)?", mode: "standard" }, settings: { maxToolIterations: 0 } });
    const { outcome } = await r.run(taskFlow);
    expect(ofType(r.events, "AGENT_STARTED")[0]?.data.tools_available).toEqual([]);
    expect(ofType(r.events, "LLM_OUTPUT")).toHaveLength(1);
    expect(outcome?.toolsInvoked).toBe(0);
  });
});

describe("complex mode", () => {
  it("runs independent subtasks in parallel and synthesizes their results", async () => {
    // A slow stream (2 ms per chunk), so overlapping really means running at the same time.
    const deps = counted(offlineRouter({ offline: { chunkDelayMs: 2 } }));
    const r = memoryRun({ spec: { query: PARALLEL, mode: "complex" } }, deps);
    const { outcome, failure } = await r.run(taskFlow);
    expect(failure).toBeUndefined();
    expectValid(r.events);

    const index = (agent: string, type: string) => r.events.findIndex((e) => e.agent_id === agent && e.type === type);
    const firstCompletion = Math.min(
      index("agent-task-1", "AGENT_COMPLETED"),
      index("agent-task-2", "AGENT_COMPLETED"),
    );
    expect(index("agent-task-1", "AGENT_STARTED")).toBeLessThan(firstCompletion);
    expect(index("agent-task-2", "AGENT_STARTED")).toBeLessThan(firstCompletion);
    expect(index("agent-task-1", "LLM_PROMPT")).toBeLessThan(index("agent-task-2", "LLM_OUTPUT"));
    expect(index("agent-task-2", "LLM_PROMPT")).toBeLessThan(index("agent-task-1", "LLM_OUTPUT"));

    expect(ofType(r.events, "AGENT_STARTED").map((e) => e.data.subtask)).toEqual([
      "Research the history of Rome",
      "Summarize the economy of Spain",
    ]);
    expect(ofType(r.events, "DEPENDENCY_SATISFIED")).toHaveLength(0);
    expect(
      ofType(r.events, "PROGRESS").map((e) => [e.agent_id, e.data.current_step, e.data.total_steps, e.data.percentage]),
    ).toEqual([
      ["orchestrator", 1, 2, 50],
      ["orchestrator", 2, 2, 100],
    ]);
    expect(ofType(r.events, "DATA_PROCESSING")[0]?.data).toEqual({
      operation: "aggregate_results",
      records_processed: 2,
      total_records: 2,
      processing_stage: "synthesis",
    });
    // Planner and synthesizer speak as the orchestrator.
    expect(byAgent(r.events, "orchestrator").filter((e) => e.type === "LLM_OUTPUT")).toHaveLength(2);
    expect(outcome).toMatchObject({ agentsUsed: 2, mode: "EXECUTION_MODE_COMPLEX", modelUsed: "offline-small" });
    expect(outcome?.result).toMatch(/^Offline synthesis: /);
    expect(outcome?.result).toContain("Spain");
    expect(deps.calls.llm).toBe(4);
  });

  it("starts a dependent subtask after its dependencies with DEPENDENCY_SATISFIED and their results", async () => {
    const r = memoryRun({ spec: { query: SEQUENTIAL, mode: "complex" } });
    const { outcome } = await r.run(taskFlow);
    expectValid(r.events);
    const satisfied = ofType(r.events, "DEPENDENCY_SATISFIED");
    expect(satisfied.map((e) => e.data)).toEqual([
      { subtask_id: "task-3", satisfied_dependencies: ["task-2"], can_proceed: true },
    ]);
    const at = r.events.indexOf(satisfied[0] as RecordedEvent);
    const completed2 = r.events.findIndex((e) => e.agent_id === "agent-task-2" && e.type === "AGENT_COMPLETED");
    const started3 = r.events.findIndex((e) => e.agent_id === "agent-task-3" && e.type === "AGENT_STARTED");
    expect(completed2).toBeLessThan(at);
    expect(at).toBeLessThan(started3);
    // The dependent agent saw its dependency's result.
    const prompt3 = r.events.find((e) => e.agent_id === "agent-task-3" && e.type === "LLM_PROMPT");
    expect(prompt3?.data.sanitized_prompt).toContain("### task-2: Summarize the economy of Spain");
    expect(ofType(r.events, "PROGRESS").map((e) => e.data.percentage)).toEqual([33, 67, 100]);
    expect(outcome?.agentsUsed).toBe(3);
  });
});

describe("supervisor mode", () => {
  it("recruits a team, delegates, collects results in the workspace, retires the team and synthesizes", async () => {
    const r = memoryRun({ spec: { query: SEQUENTIAL, mode: "supervisor" } });
    const { outcome, failure } = await r.run(taskFlow);
    expect(failure).toBeUndefined();
    expectValid(r.events);
    const members = ["researcher-1", "writer-2", "analyst-3"];

    const recruited = ofType(r.events, "TEAM_RECRUITED");
    expect(recruited).toHaveLength(1);
    expect(recruited[0]?.agent_id).toBe("supervisor");
    expect(recruited[0]?.data.team_size).toBe(3);
    expect(
      (recruited[0]!.data.agents as Array<{ agent_id: string; role: string }>).map((a) => [a.agent_id, a.role]),
    ).toEqual([
      ["researcher-1", "researcher"],
      ["writer-2", "writer"],
      ["analyst-3", "analyst"],
    ]);
    expect(ofType(r.events, "ROLE_ASSIGNED").map((e) => [e.agent_id, e.data.role])).toEqual(
      members.map((m) => [m, m.split("-")[0]]),
    );
    expect(ofType(r.events, "ROLE_ASSIGNED")[0]?.data.tools).toEqual(["datetime", "text", "http_fetch"]);
    expect(ofType(r.events, "DELEGATION").map((e) => [e.agent_id, e.data.to_agent, e.data.priority])).toEqual([
      ["supervisor", "researcher-1", "normal"],
      ["supervisor", "writer-2", "high"],
      ["supervisor", "analyst-3", "normal"],
    ]);

    for (const m of members) {
      const mine = byAgent(r.events, m);
      expect(mine.map((e) => e.type)).toContain("AGENT_STARTED");
      expect(mine.map((e) => e.type)).toContain("AGENT_COMPLETED");
      expect(
        ofType(r.events, "MESSAGE_SENT").filter((e) => e.agent_id === "supervisor" && e.data.to === m),
      ).toHaveLength(1);
      expect(
        ofType(r.events, "MESSAGE_RECEIVED").filter((e) => e.agent_id === m && e.data.from === "supervisor"),
      ).toHaveLength(1);
      expect(
        ofType(r.events, "MESSAGE_SENT").filter(
          (e) => e.agent_id === m && e.data.to === "supervisor" && e.data.message_type === "task_result",
        ),
      ).toHaveLength(1);
      expect(
        ofType(r.events, "MESSAGE_RECEIVED").filter((e) => e.agent_id === "supervisor" && e.data.from === m),
      ).toHaveLength(1);
    }
    const results = ofType(r.events, "AGENT_COMPLETED").map((e) => [e.agent_id, e.data.result]);
    const workspace = ofType(r.events, "WORKSPACE_UPDATED");
    expect(workspace.map((e) => e.data.key).sort()).toEqual(["results/task-1", "results/task-2", "results/task-3"]);
    for (const w of workspace) {
      const member = members[Number((w.data.key as string).slice(-1)) - 1];
      expect(w.data).toMatchObject({ action: "set", value: results.find(([id]) => id === member)?.[1] });
    }
    const statuses = ofType(r.events, "TEAM_STATUS");
    expect(statuses[0]?.data).toEqual({
      active_agents: 0,
      idle_agents: 3,
      tasks_completed: 0,
      tasks_remaining: 3,
      coordination_mode: "supervisor",
    });
    expect(statuses.at(-1)?.data).toMatchObject({ active_agents: 0, tasks_completed: 3, tasks_remaining: 0 });
    const retired = ofType(r.events, "TEAM_RETIRED")[0];
    expect(retired?.data).toMatchObject({ team_size: 3, reason: "All delegated subtasks completed" });
    expect(retired?.data.total_tokens).toBe(
      ofType(r.events, "AGENT_COMPLETED").reduce((n, e) => n + (e.data.tokens_used as number), 0),
    );
    expect(r.events.indexOf(retired as RecordedEvent)).toBeLessThan(
      r.events.findIndex((e) => e.type === "DATA_PROCESSING"),
    );
    expect(r.events.at(-1)).toMatchObject({ agent_id: "supervisor", type: "LLM_OUTPUT" });
    expect(outcome).toMatchObject({ agentsUsed: 4, mode: "EXECUTION_MODE_COMPLEX" });
    expect(outcome?.result).toMatch(/^Offline synthesis: /);
  });
});
