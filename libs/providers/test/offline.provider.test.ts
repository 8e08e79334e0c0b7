import { describe, expect, it } from "vitest";
import {
  OFFLINE_MARKERS,
  createOfflineProvider,
  isAbortError,
  type CompletionRequest,
  type StreamDelta,
  type ToolSpec,
} from "@tog/providers";

const tool = (name: string, properties: Record<string, unknown> = {}): ToolSpec => ({
  name,
  description: name,
  parameters: { type: "object", properties },
});
const TOOLS = [tool("calculator", { expression: { type: "string" } }), tool("datetime"), tool("json")];
const ask = (content: string, extra: Partial<CompletionRequest> = {}): CompletionRequest => ({
  model: "offline-small",
  messages: [{ role: "user", content }],
  ...extra,
});

async function run(request: CompletionRequest) {
  const deltas: StreamDelta[] = [];
  const completion = await createOfflineProvider().stream(request, { onDelta: (d) => deltas.push(d) });
  return { completion, deltas };
}

describe("offline provider", () => {
  it("answers without tools by echoing the query, streamed in small chunks that join to the text", async () => {
    const { completion, deltas } = await run(ask("Tell me about  the\nrain in Spain"));
    expect(completion.text).toBe(
      'Offline answer: you asked "Tell me about the rain in Spain". This deterministic reply comes from the offline provider; no language model was called.',
    );
    expect(completion.provider).toBe("offline");
    expect(completion.model).toBe("offline-small");
    expect(completion.finishReason).toBe("stop");
    expect(deltas.length).toBeGreaterThan(10);
    expect(deltas.map((d) => d.text).join("")).toBe(completion.text);
    expect(deltas.map((d) => d.index)).toEqual(deltas.map((_, i) => i));
    for (const d of deltas) expect(d.text.trim().length).toBeLessThanOrEqual(12);
    // Usage by the documented estimate: ceil(chars / 4); the last delta's running count matches.
    expect(completion.usage.outputTokens).toBe(Math.ceil(completion.text.length / 4));
    expect(completion.usage.inputTokens).toBe(Math.ceil("Tell me about  the\nrain in Spain".length / 4));
    expect(completion.usage.totalTokens).toBe(completion.usage.inputTokens + completion.usage.outputTokens);
    expect(deltas.at(-1)?.totalTokensSoFar).toBe(completion.usage.outputTokens);
  });

  it("is deterministic: the same request gives the same chunks, calls and usage", async () => {
    for (const request of [
      ask("why is the sky blue?"),
      ask("what is 12*(3+4)?", { tools: TOOLS }),
      ask("Plan a trip", {
        messages: [
          { role: "system", content: "#decompose" },
          { role: "user", content: "Plan a trip" },
        ],
      }),
    ]) {
      const a = await run(request);
      const b = await run(structuredClone(request));
      expect(b).toEqual(a);
    }
  });

  it("calls the calculator for an arithmetic question, then answers with the tool's result", async () => {
    const { completion, deltas } = await run(ask("what is 12*(3+4)?", { tools: TOOLS }));
    expect(completion.toolCalls).toEqual([
      { id: "call_offline_1_1", name: "calculator", arguments: { expression: "12*(3+4)" } },
    ]);
    expect(completion.finishReason).toBe("tool_calls");
    expect(completion.text).toBe("");
    expect(deltas).toEqual([]);
    expect(completion.usage.outputTokens).toBeGreaterThan(0);

    const followUp = await run({
      model: "offline-small",
      tools: TOOLS,
      messages: [
        { role: "user", content: "what is 12*(3+4)?" },
        { role: "assistant", content: "", tool_calls: completion.toolCalls },
        { role: "tool", tool_call_id: "call_offline_1_1", content: '{"result":84}' },
      ],
    });
    expect(followUp.completion.toolCalls).toEqual([]);
    expect(followUp.completion.text).toBe("Offline answer: calculator(12*(3+4)) = 84");
  });

  it("calls datetime for date/time questions (dates are not subtractions) and json for JSON to format", async () => {
    const between = await run(ask("How many days are there between 2024-01-01 and 2024-03-01?", { tools: TOOLS }));
    expect(between.completion.toolCalls[0]).toMatchObject({
      name: "datetime",
      arguments: { operation: "days_between", start: "2024-01-01", end: "2024-03-01" },
    });
    const now = await run(ask("What time is it in Europe/Paris?", { tools: TOOLS }));
    expect(now.completion.toolCalls[0]).toMatchObject({
      name: "datetime",
      arguments: { operation: "now", timezone: "Europe/Paris" },
    });
    const json = await run(ask('Please pretty-print this JSON: {"a":1,"b":[true,null]} thanks', { tools: TOOLS }));
    expect(json.completion.toolCalls[0]).toMatchObject({
      name: "json",
      arguments: { operation: "format", text: '{"a":1,"b":[true,null]}' },
    });
  });

  it("only calls tools that are offered, and fits argument names to the tool's schema", async () => {
    const noCalc = await run(ask("what is 2+2?", { tools: [tool("datetime")] }));
    expect(noCalc.completion.toolCalls).toEqual([]);
    expect(noCalc.completion.text).toContain('you asked "what is 2+2?"');
    const renamed = await run(
      ask("days between 2024-01-01 and 2024-01-31", {
        tools: [
          tool("datetime", {
            action: { type: "string", enum: ["current_time", "date_diff"] },
            from: { type: "string" },
            to: { type: "string" },
          }),
        ],
      }),
    );
    expect(renamed.completion.toolCalls[0]?.arguments).toEqual({
      action: "date_diff",
      from: "2024-01-01",
      to: "2024-01-31",
    });
    // Shaped like the built-in tools' strict schemas (@tog/tools): diff from/to in units; format with indent.
    const builtinLike = [
      tool("datetime", {
        operation: { enum: ["now", "add", "diff", "format", "parse"] },
        timezone: {},
        from: {},
        to: {},
        units: {},
      }),
      tool("json", { operation: { enum: ["parse", "format", "query", "diff"] }, text: {}, indent: {} }),
    ];
    const diff = await run(ask("days between 2024-01-01 and 2024-01-31", { tools: builtinLike }));
    expect(diff.completion.toolCalls[0]?.arguments).toEqual({
      operation: "diff",
      from: "2024-01-01",
      to: "2024-01-31",
      units: ["days"],
    });
    const minify = await run(ask('minify [1, 2, {"a": 3}]', { tools: builtinLike }));
    expect(minify.completion.toolCalls[0]?.arguments).toEqual({
      operation: "format",
      text: '[1, 2, {"a": 3}]',
      indent: 0,
    });
    const dropped = await run(
      ask("what is the current time?", { tools: [tool("datetime", { operation: { enum: ["now"] } })] }),
    );
    expect(dropped.completion.toolCalls[0]?.arguments).toEqual({ operation: "now" });
  });

  it('calls workspace_write for `Save "<value>" to workspace key <key>`, only when it is offered', async () => {
    const writer = tool("workspace_write", { key: {}, action: { enum: ["set", "delete"] }, value: {} });
    const save = await run(ask('Save "v-42 done" to workspace key chaos/run-7.', { tools: [...TOOLS, writer] }));
    expect(save.completion.toolCalls).toEqual([
      {
        id: "call_offline_1_1",
        name: "workspace_write",
        arguments: { key: "chaos/run-7", value: "v-42 done", action: "set" },
      },
    ]);
    expect(save.completion.finishReason).toBe("tool_calls");
    const other = await run(ask('please store "x" into the workspace key notes:a1', { tools: [writer] }));
    expect(other.completion.toolCalls[0]?.arguments).toEqual({ key: "notes:a1", value: "x", action: "set" });
    // Not offered (a role without the tool): a plain answer, never a call of another tool.
    const without = await run(ask('Save "1+2" to workspace key k', { tools: TOOLS }));
    expect(without.completion.toolCalls.map((c) => c.name)).not.toContain("workspace_write");
    // Not the phrase: no write.
    const unrelated = await run(ask("What is in the workspace?", { tools: [writer] }));
    expect(unrelated.completion.toolCalls).toEqual([]);

    const followUp = await run({
      model: "offline-small",
      tools: [writer],
      messages: [
        { role: "user", content: 'Save "v-42 done" to workspace key chaos/run-7.' },
        { role: "assistant", content: "", tool_calls: save.completion.toolCalls },
        { role: "tool", tool_call_id: "call_offline_1_1", content: 'Set workspace key "chaos/run-7"' },
      ],
    });
    expect(followUp.completion.text).toBe(
      'Offline answer: workspace_write(chaos/run-7, v-42 done, set) = Set workspace key "chaos/run-7"',
    );
  });

  it(`${OFFLINE_MARKERS.decompose} returns a subtask plan as JSON, parallel or sequential by the wording`, async () => {
    const plan = async (query: string) => {
      const { completion, deltas } = await run({
        model: "offline-medium",
        messages: [
          { role: "system", content: "You plan work. #decompose" },
          { role: "user", content: query },
        ],
      });
      expect(deltas.map((d) => d.text).join("")).toBe(completion.text);
      return JSON.parse(completion.text) as unknown;
    };
    expect(await plan("Research the EV market; compare Tesla and BYD. Then write a report")).toEqual({
      subtasks: [
        { id: "task-1", description: "Research the EV market", dependencies: [] },
        { id: "task-2", description: "Compare Tesla and BYD", dependencies: [] },
        { id: "task-3", description: "Write a report", dependencies: ["task-2"] },
      ],
    });
    expect(await plan("1. Collect data\n2. Analyze it\n3. Summarize")).toEqual({
      subtasks: [
        { id: "task-1", description: "Collect data", dependencies: [] },
        { id: "task-2", description: "Analyze it", dependencies: ["task-1"] },
        { id: "task-3", description: "Summarize", dependencies: ["task-2"] },
      ],
    });
    expect(await plan("Explain photosynthesis")).toEqual({
      subtasks: [
        { id: "task-1", description: "Research: Explain photosynthesis", dependencies: [] },
        { id: "task-2", description: "Write the answer to: Explain photosynthesis", dependencies: ["task-1"] },
      ],
    });
  });

  it(`${OFFLINE_MARKERS.complexity} returns a score in [0,1] and a mode`, async () => {
    const score = async (query: string) => {
      const { completion } = await run({
        model: "offline-small",
        messages: [
          { role: "system", content: "#complexity" },
          { role: "user", content: query },
        ],
      });
      return JSON.parse(completion.text) as { complexity_score: number; mode: string; reasoning: string };
    };
    expect(await score("hello")).toEqual({
      complexity_score: 0.1,
      mode: "simple",
      reasoning: "Offline estimate from 1 word; 1 part.",
    });
    expect(await score("what is 12*(3+4)?")).toMatchObject({ complexity_score: 0.35, mode: "standard" });
    const complex = await score("Research the EV market, compare Tesla and BYD, then write a report");
    expect(complex.mode).toBe("complex");
    expect(complex.complexity_score).toBeGreaterThanOrEqual(0.6);
    expect(complex.complexity_score).toBeLessThanOrEqual(1);
  });

  it(`${OFFLINE_MARKERS.synthesize} combines the results it is given`, async () => {
    const { completion } = await run({
      model: "offline-large",
      messages: [
        { role: "system", content: "#synthesize" },
        { role: "user", content: "task-1: A\ntask-2: B" },
      ],
    });
    expect(completion.text).toBe("Offline synthesis: task-1: A task-2: B");
  });

  it("with a chunk delay, an abort stops the stream between chunks", async () => {
    const controller = new AbortController();
    const deltas: StreamDelta[] = [];
    const started = Date.now();
    const err = await createOfflineProvider({ chunkDelayMs: 20 })
      .stream(ask("a long question that makes a long answer"), {
        signal: controller.signal,
        onDelta: (d) => {
          deltas.push(d);
          if (d.index === 2) controller.abort();
        },
      })
      .catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    expect(deltas).toHaveLength(3);
    expect(Date.now() - started).toBeLessThan(500);
  });
});
