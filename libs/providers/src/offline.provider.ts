import { setTimeout as sleep } from "node:timers/promises";
import {
  abortReason,
  deltaEmitter,
  estimateTokens,
  type ChatMessage,
  type Completion,
  type CompletionRequest,
  type FinishReason,
  type LlmProvider,
  type StreamOptions,
  type ToolCall,
} from "./provider.ts";
import { decompose, detectToolIntent, estimateComplexity } from "./offline.intents.ts";
import { toolArguments } from "./offline.tool-args.ts";
import { estimateInputTokens, estimateOutputTokens } from "./tool-arguments.ts";

/**
 * Markers the offline provider recognizes in a system prompt (first match wins):
 * - `#decompose`: replies with JSON `{"subtasks":[{"id","description","dependencies":[]}]}`
 *   planned from the last user message (see `decompose` in offline.intents.ts).
 * - `#complexity`: replies with JSON `{"complexity_score","mode","reasoning"}` for the last
 *   user message (see `estimateComplexity`).
 * - `#synthesize`: replies "Offline synthesis: " + the last user message (the results to combine).
 */
export const OFFLINE_MARKERS = Object.freeze({
  decompose: "#decompose",
  complexity: "#complexity",
  synthesize: "#synthesize",
});

export interface OfflineProviderOptions {
  /** Catalog provider name; `offline` in the shipped catalog. */
  name?: string | undefined;
  /** Pause before each streamed chunk (tests of cancellation); 0 (default) never sleeps. */
  chunkDelayMs?: number | undefined;
}

interface Reply {
  text: string;
  toolCalls: ToolCall[];
  finishReason: FinishReason;
}

// Chunks of at most 12 visible characters with their leading whitespace, like BPE tokens;
// the last alternative keeps trailing whitespace so the chunks always join to the full text.
const CHUNK = /\s*\S{1,12}|\s+$/gu;
const MAX_ECHO = 2000;

/**
 * The deterministic local provider: the default when no provider key is configured. The same
 * request always yields the same chunks, tool calls and usage (usage by `estimateTokens`,
 * one token per 4 characters).
 */
export function createOfflineProvider(options: OfflineProviderOptions = {}): LlmProvider {
  const name = options.name ?? "offline";
  const delay = options.chunkDelayMs ?? 0;

  return {
    name,
    async stream(request: CompletionRequest, streamOptions: StreamOptions = {}): Promise<Completion> {
      const { signal } = streamOptions;
      if (signal?.aborted) throw abortReason(signal);
      const reply = respond(request);
      const emit = deltaEmitter(streamOptions.onDelta);
      for (const chunk of reply.text.match(CHUNK) ?? []) {
        if (delay > 0) await sleep(delay, undefined, { signal });
        if (signal?.aborted) throw abortReason(signal);
        emit(chunk);
      }
      const inputTokens = estimateInputTokens(request);
      const outputTokens =
        reply.toolCalls.length > 0 ? estimateOutputTokens(reply.text, reply.toolCalls) : estimateTokens(reply.text);
      return {
        text: reply.text,
        toolCalls: reply.toolCalls,
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        model: request.model,
        provider: name,
        finishReason: reply.finishReason,
      };
    },
  };
}

function respond(request: CompletionRequest): Reply {
  const { messages } = request;
  const system = messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n");
  const lastUser = findLastIndex(messages, (m) => m.role === "user");
  const query = lastUser >= 0 ? (messages[lastUser]?.content ?? "") : "";

  if (system.includes(OFFLINE_MARKERS.decompose)) return text(JSON.stringify({ subtasks: decompose(query) }));
  if (system.includes(OFFLINE_MARKERS.complexity)) return text(JSON.stringify(estimateComplexity(query)));
  if (system.includes(OFFLINE_MARKERS.synthesize)) return text(`Offline synthesis: ${echo(query)}`);

  const results = messages.slice(lastUser + 1).filter((m) => m.role === "tool");
  if (results.length > 0) return text(`Offline answer: ${results.map((r) => describeResult(r, messages)).join("; ")}`);

  const tools = request.tools ?? [];
  if (tools.length > 0) {
    const intent = detectToolIntent(query, new Set(tools.map((t) => t.name)));
    if (intent) {
      const turn = messages.filter((m) => m.role === "assistant").length + 1;
      const spec = tools.find((t) => t.name === intent.tool);
      return {
        text: "",
        toolCalls: [{ id: `call_offline_${turn}_1`, name: intent.tool, arguments: toolArguments(intent, spec) }],
        finishReason: "tool_calls",
      };
    }
  }
  const q = echo(query);
  return text(
    q === ""
      ? "Offline answer: (empty query). This deterministic reply comes from the offline provider; no language model was called."
      : `Offline answer: you asked "${q}". This deterministic reply comes from the offline provider; no language model was called.`,
  );
}

function text(value: string): Reply {
  return { text: value, toolCalls: [], finishReason: "stop" };
}

function echo(value: string): string {
  const flat = value.replace(/\s+/g, " ").trim();
  return flat.length > MAX_ECHO ? `${flat.slice(0, MAX_ECHO)}…` : flat;
}

/** "calculator(12*(3+4)) = 84": the call that asked, and the tool's `result` (or its whole output). */
function describeResult(result: ChatMessage, messages: readonly ChatMessage[]): string {
  let call: ToolCall | undefined;
  for (const m of messages) {
    const hit = m.tool_calls?.find((c) => c.id === result.tool_call_id);
    if (hit) call = hit;
  }
  const value = resultValue(result.content);
  if (!call) return `tool result ${value}`;
  const args = Object.values(call.arguments).filter((v) => typeof v === "string" || typeof v === "number");
  return `${call.name}(${args.join(", ")}) = ${value}`;
}

function resultValue(content: string): string {
  try {
    const parsed = JSON.parse(content) as unknown;
    if (parsed !== null && typeof parsed === "object" && "result" in parsed) {
      const r = (parsed as { result: unknown }).result;
      return echo(typeof r === "string" ? r : JSON.stringify(r));
    }
  } catch {
    // plain-text tool output
  }
  return echo(content);
}

function findLastIndex<T>(items: readonly T[], test: (item: T) => boolean): number {
  for (let i = items.length - 1; i >= 0; i--) if (test(items[i] as T)) return i;
  return -1;
}
