import { describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { WorkflowFailure } from "../../src/runtime/flow-context.ts";
import { interpolate, parsePlan, resolveTemplate, taskWorkflow, validateTaskSpec } from "../../src/flows/index.ts";
import { invalidPayloads, normalizeSpec } from "./memory-context.ts";
import { catalog, counted, memoryRun, offlineRouter, ofType, types } from "./setup.ts";

describe("templates", () => {
  it("disable_ai renders the template only: no model call, model_used template, provider none", async () => {
    const deps = counted();
    const r = memoryRun(
      { spec: { query: "ignored", template: "greeting", disableAi: true, promptParams: { name: "Ada" } } },
      deps,
    );
    const { outcome } = await r.run(taskWorkflow);
    expect(outcome).toEqual({
      result: "Hello Ada, welcome to our service!",
      modelUsed: "template",
      provider: "none",
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
      agentsUsed: 0,
      toolsInvoked: 0,
      mode: "EXECUTION_MODE_SIMPLE",
    });
    expect(deps.calls).toEqual({ llm: 0, tools: 0 });
    expect(invalidPayloads(r.events)).toEqual([]);
    expect(types(r.events)).toEqual(["WORKFLOW_STARTED", "DATA_PROCESSING"]);
    expect(r.events[0]?.data.mode).toBe("simple");
    expect(r.events[1]?.data).toEqual({
      operation: "render_template",
      records_processed: 2,
      total_records: 2,
      processing_stage: "template",
    });
  });

  it("template_version picks a version; latest is the newest", async () => {
    const r = memoryRun({
      spec: {
        query: "x",
        template: "greeting",
        templateVersion: "1.0.0",
        disableAi: true,
        promptParams: { name: "Ada" },
      },
    });
    expect((await r.run(taskWorkflow)).outcome?.result).toBe("Hello Ada!");
    expect(resolveTemplate("greeting", "latest").version.version).toBe("2.0.0");
    expect(resolveTemplate("greeting", undefined).version.version).toBe("2.0.0");
  });

  it("without disable_ai the rendered template is the agent's prompt", async () => {
    const r = memoryRun({
      spec: {
        query: "The meeting moved to Friday at 10.",
        template: "summarize",
        templateVersion: "1.0.0",
        mode: "simple",
        promptParams: { max_sentences: 1 },
      },
    });
    const { outcome } = await r.run(taskWorkflow);
    const rendered = "Summarize the following in 1 sentences:\n\nThe meeting moved to Friday at 10.";
    expect(ofType(r.events, "AGENT_STARTED")[0]?.data.subtask).toBe(rendered);
    expect(outcome?.result).toContain("Summarize the following in 1 sentences: The meeting moved to Friday at 10.");
    expect(r.events[0]?.data.query).toBe("The meeting moved to Friday at 10.");
  });
});

describe("system prompt, role and context", () => {
  it("system_prompt replaces the role prompt, with ${var} from prompt_params; unknown variables stay", async () => {
    const r = memoryRun({
      spec: {
        query: "Hi",
        mode: "simple",
        role: "analyst",
        systemPrompt: "You help ${user.name} with ${topic}. Keep ${unknown} as is.",
        promptParams: { user: { name: "Ada" }, topic: "budgets" },
      },
    });
    await r.run(taskWorkflow);
    const prompt = ofType(r.events, "LLM_PROMPT")[0]?.data.sanitized_prompt as string;
    expect(prompt).toContain("[system] You help Ada with budgets. Keep ${unknown} as is.");
    expect(prompt).not.toContain("careful analyst");
    expect(ofType(r.events, "AGENT_STARTED")[0]).toMatchObject({ agent_id: "analyst", data: { role: "analyst" } });
  });

  it("free-form context keys reach the agent; credentials are masked in LLM_PROMPT", async () => {
    const r = memoryRun({
      spec: { query: "Hi", mode: "simple", metadata: { customer: "acme", api_key: "sk-abcdefghijklmnopqrstuvwxyz" } },
    });
    await r.run(taskWorkflow);
    const prompt = ofType(r.events, "LLM_PROMPT")[0]?.data.sanitized_prompt as string;
    expect(prompt).toContain('"customer":"acme"');
    expect(prompt).not.toContain("sk-abcdefghijklmnopqrstuvwxyz");
  });

  it("session history goes between the system prompt and the query, reported as DATA_PROCESSING", async () => {
    const r = memoryRun({
      spec: { query: "And the second?", mode: "simple" },
      history: [
        { role: "user", content: "Name two planets" },
        { role: "assistant", content: "Mars and Venus" },
      ],
    });
    await r.run(taskWorkflow);
    expect(ofType(r.events, "DATA_PROCESSING")[0]?.data).toEqual({
      operation: "load_session_history",
      records_processed: 2,
      total_records: 2,
      processing_stage: "context",
    });
    expect(ofType(r.events, "LLM_PROMPT")[0]?.data.sanitized_prompt).toMatch(
      /\[system\] .*\n\[user\] Name two planets\n\[assistant\] Mars and Venus\n\[user\] And the second\?$/s,
    );
  });

  it("an unknown role fails with INVALID_INPUT right after WORKFLOW_STARTED", async () => {
    const deps = counted();
    const r = memoryRun({ spec: { query: "Hi", role: "pirate" } }, deps);
    const { failure } = await r.run(taskWorkflow);
    expect(failure).toBeInstanceOf(WorkflowFailure);
    expect(failure).toMatchObject({
      errorType: "INVALID_INPUT",
      message: 'Unknown role: "pirate" (allowed: generalist, analyst, researcher, coder, writer)',
    });
    expect(types(r.events)).toEqual(["WORKFLOW_STARTED"]);
    expect(deps.calls.llm).toBe(0);
  });
});

describe("interpolate", () => {
  it("replaces known names once, JSON-encodes objects, keeps unknown ones", () => {
    expect(
      interpolate("${a} ${b.c} ${list} ${n} ${missing} ${a.x}", { a: "${b.c}", b: { c: 1 }, list: [1, 2], n: null }),
    ).toEqual({
      text: "${b.c} 1 [1,2] ${n} ${missing} ${a.x}",
      references: 6,
      replaced: 3,
    });
  });
});

describe("parsePlan", () => {
  it("renumbers ids, keeps only dependencies on earlier subtasks, reads fenced JSON", () => {
    const text =
      '```json\n{"subtasks":[{"id":"a","description":"First"},{"id":"b","description":"Second","dependencies":["a","b","zz","c"]},{"id":"c","description":"Third","dependencies":["b"]}]}\n```';
    expect(parsePlan(text, "q")).toEqual([
      { id: "task-1", description: "First", dependencies: [] },
      { id: "task-2", description: "Second", dependencies: ["task-1"] },
      { id: "task-3", description: "Third", dependencies: ["task-2"] },
    ]);
  });

  it("falls back to the offline heuristic for an unreadable plan", () => {
    expect(parsePlan("I cannot do that", "Find A; find B")).toEqual([
      { id: "task-1", description: "Find A", dependencies: [] },
      { id: "task-2", description: "Find B", dependencies: [] },
    ]);
  });
});

describe("validateTaskSpec", () => {
  const check =
    (spec: Parameters<typeof normalizeSpec>[0], withRouter = false) =>
    () =>
      validateTaskSpec(normalizeSpec(spec), withRouter ? { catalog, llm: offlineRouter() } : { catalog });

  it("accepts valid specs", () => {
    expect(check({ query: "x" })).not.toThrow();
    expect(
      check({
        query: "x",
        role: "coder",
        template: "summarize",
        templateVersion: "1.1.0",
        modelOverride: "gpt-5-nano",
        providerOverride: "openai",
      }),
    ).not.toThrow();
    expect(check({ query: "x", template: "greeting", disableAi: true })).not.toThrow();
    expect(check({ query: "x", providerOverride: "offline" }, true)).not.toThrow();
  });

  it.each([
    [
      { query: "x", role: "pirate" },
      'Unknown role: "pirate" (allowed: generalist, analyst, researcher, coder, writer)',
    ],
    [
      { query: "x", template: "nope" },
      'Unknown template: "nope" (available: summarize, explain, code_review, greeting)',
    ],
    [
      { query: "x", template: "greeting", templateVersion: "9" },
      'Unknown template version: "9" for template "greeting" (available: 1.0.0, 2.0.0, latest)',
    ],
    [{ query: "x", templateVersion: "1.0.0" }, "template_version requires template"],
    [{ query: "x", disableAi: true }, "disable_ai requires a template (context.template)"],
    [{ query: "x", modelOverride: "gpt-0" }, "Unknown model: gpt-0"],
    [{ query: "x", providerOverride: "acme" }, "Unknown provider: acme"],
  ] as const)("rejects %j", (spec, message) => {
    expect(check(spec)).toThrow(ValidationError);
    expect(check(spec)).toThrow(message);
  });

  it("with a router, also rejects providers without a configured key", () => {
    expect(check({ query: "x", providerOverride: "openai" }, true)).toThrow(
      "Provider openai is unavailable: no API key configured",
    );
    expect(check({ query: "x", modelOverride: "gpt-5-nano" }, true)).toThrow(
      "Model gpt-5-nano is unavailable: provider openai has no API key configured",
    );
  });
});
