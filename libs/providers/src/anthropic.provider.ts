import { ProviderError } from "./errors.ts";
import {
  deltaEmitter,
  type ChatMessage,
  type Completion,
  type CompletionRequest,
  type FinishReason,
  type LlmProvider,
  type StreamOptions,
  type ToolCall,
} from "./provider.ts";
import { STOP, parseJson, postSse, type FetchLike } from "./sse-http.ts";
import { parseToolArguments } from "./tool-arguments.ts";

export const ANTHROPIC_VERSION = "2023-06-01";

export interface AnthropicProviderOptions {
  name: string;
  /** https://api.anthropic.com or https://api.anthropic.com/v1 (the catalog's form); both work. */
  baseUrl: string;
  apiKey: string | undefined;
  fetch?: FetchLike | undefined;
  idleTimeoutMs?: number | undefined;
  /** Anthropic requires `max_tokens`; used when the request sets none. */
  defaultMaxTokens?: number | undefined;
}

interface Usage {
  input_tokens?: number;
  output_tokens?: number;
  cache_creation_input_tokens?: number | null;
  cache_read_input_tokens?: number | null;
}

type StreamEvent =
  | { type: "message_start"; message: { usage?: Usage } }
  | {
      type: "content_block_start";
      index: number;
      content_block: { type: string; id?: string; name?: string; text?: string };
    }
  | { type: "content_block_delta"; index: number; delta: { type: string; text?: string; partial_json?: string } }
  | { type: "content_block_stop"; index: number }
  | { type: "message_delta"; delta: { stop_reason?: string | null }; usage?: Usage }
  | { type: "message_stop" }
  | { type: "ping" }
  | { type: "error"; error: { type?: string; message?: string } };

// Error types of the `error` event worth repeating (the same ones Anthropic answers with 429/5xx/529).
const RETRYABLE_ERROR_TYPES = new Set(["overloaded_error", "api_error", "rate_limit_error", "timeout_error"]);

/** Anthropic Messages API over its named-event SSE stream. */
export function createAnthropicProvider(options: AnthropicProviderOptions): LlmProvider {
  const url = `${options.baseUrl.replace(/\/+$/, "").replace(/\/v1$/, "")}/v1/messages`;
  const doFetch = options.fetch ?? fetch;
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const defaultMaxTokens = options.defaultMaxTokens ?? 4096;
  const headers: Record<string, string> = { "anthropic-version": ANTHROPIC_VERSION };
  if (options.apiKey) headers["x-api-key"] = options.apiKey;
  const provider = options.name;

  return {
    name: provider,
    async stream(request: CompletionRequest, streamOptions: StreamOptions = {}): Promise<Completion> {
      const model = request.model;
      const emit = deltaEmitter(streamOptions.onDelta);
      let text = "";
      const toolBlocks = new Map<number, { id: string; name: string; json: string }>();
      let inputTokens = 0;
      let outputTokens = 0;
      let stopReason: string | null = null;
      let stopped = false;

      await postSse(
        {
          fetch: doFetch,
          url,
          headers,
          body: toRequestBody(request, defaultMaxTokens),
          signal: streamOptions.signal,
          provider,
          model,
          idleTimeoutMs,
        },
        (frame) => {
          const event = parseJson<StreamEvent>(frame.data, provider, model);
          switch (event.type) {
            case "message_start": {
              const u = event.message.usage;
              if (u) {
                inputTokens = inputSum(u);
                outputTokens = u.output_tokens ?? 0;
              }
              return;
            }
            case "content_block_start": {
              const block = event.content_block;
              if (block.type === "tool_use")
                toolBlocks.set(event.index, { id: block.id ?? "", name: block.name ?? "", json: "" });
              else if (block.type === "text" && block.text) {
                text += block.text;
                emit(block.text);
              }
              return;
            }
            case "content_block_delta": {
              const d = event.delta;
              if (d.type === "text_delta" && d.text) {
                text += d.text;
                emit(d.text);
              } else if (d.type === "input_json_delta" && d.partial_json) {
                const block = toolBlocks.get(event.index);
                if (block) block.json += d.partial_json;
              }
              // thinking_delta / signature_delta / citations_delta carry no answer text.
              return;
            }
            case "message_delta": {
              if (event.delta.stop_reason) stopReason = event.delta.stop_reason;
              // message_delta usage is cumulative; newer API versions repeat input counts here too.
              if (event.usage?.output_tokens !== undefined) outputTokens = event.usage.output_tokens;
              if (event.usage?.input_tokens !== undefined) inputTokens = inputSum(event.usage);
              return;
            }
            case "message_stop":
              stopped = true;
              return STOP;
            case "error": {
              const type = event.error.type ?? "error";
              throw new ProviderError(`${provider} ${model}: ${type}: ${event.error.message ?? ""}`.trimEnd(), {
                provider,
                model,
                retryable: RETRYABLE_ERROR_TYPES.has(type),
              });
            }
            default:
              // ping, content_block_stop, and event types added after this adapter was written.
              return;
          }
        },
      );

      if (!stopped) {
        throw new ProviderError(`${provider} ${model}: stream ended before message_stop`, {
          provider,
          model,
          retryable: true,
        });
      }
      const toolCalls: ToolCall[] = [...toolBlocks.entries()]
        .sort(([a], [b]) => a - b)
        .map(([, b]) => ({ id: b.id, name: b.name, arguments: parseToolArguments(b.json, provider, model, b.name) }));
      return {
        text,
        toolCalls,
        usage: { inputTokens, outputTokens, totalTokens: inputTokens + outputTokens },
        model,
        provider,
        finishReason: toFinishReason(stopReason),
      };
    },
  };
}

function inputSum(u: Usage): number {
  return (u.input_tokens ?? 0) + (u.cache_creation_input_tokens ?? 0) + (u.cache_read_input_tokens ?? 0);
}

function toRequestBody(request: CompletionRequest, defaultMaxTokens: number): Record<string, unknown> {
  const system = request.messages
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n\n");
  const body: Record<string, unknown> = {
    model: request.model,
    max_tokens: request.max_tokens ?? defaultMaxTokens,
    messages: toWireMessages(request.messages),
    stream: true,
  };
  if (system !== "") body.system = system;
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters }));
  }
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

type Block = Record<string, unknown>;
interface WireMessage {
  role: "user" | "assistant";
  content: Block[];
}

/**
 * Anthropic takes alternating user/assistant turns of content blocks: tool results are
 * `tool_result` blocks of a user turn, tool calls are `tool_use` blocks of an assistant turn,
 * and consecutive messages of one role are merged into one turn.
 */
function toWireMessages(messages: readonly ChatMessage[]): WireMessage[] {
  const out: WireMessage[] = [];
  const push = (role: WireMessage["role"], blocks: Block[]) => {
    if (blocks.length === 0) return;
    const last = out[out.length - 1];
    if (last && last.role === role) last.content.push(...blocks);
    else out.push({ role, content: blocks });
  };
  for (const m of messages) {
    switch (m.role) {
      case "system":
        break;
      case "user":
        // Anthropic refuses empty text blocks.
        push("user", m.content === "" ? [] : [{ type: "text", text: m.content }]);
        break;
      case "tool":
        push("user", [{ type: "tool_result", tool_use_id: m.tool_call_id ?? "", content: m.content }]);
        break;
      case "assistant": {
        const blocks: Block[] = m.content === "" ? [] : [{ type: "text", text: m.content }];
        for (const c of m.tool_calls ?? [])
          blocks.push({ type: "tool_use", id: c.id, name: c.name, input: c.arguments });
        push("assistant", blocks);
        break;
      }
    }
  }
  return out;
}

function toFinishReason(reason: string | null): FinishReason {
  switch (reason) {
    case "end_turn":
    case "stop_sequence":
    case null:
      return "stop";
    case "max_tokens":
      return "length";
    case "tool_use":
      return "tool_calls";
    case "refusal":
      return "content_filter";
    default:
      return "other";
  }
}
