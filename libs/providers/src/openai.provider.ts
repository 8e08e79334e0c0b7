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
import { estimateInputTokens, estimateOutputTokens, parseToolArguments } from "./tool-arguments.ts";

export interface OpenAiProviderOptions {
  /** Catalog provider name reported in completions. */
  name: string;
  /** e.g. https://api.openai.com/v1, http://127.0.0.1:11434/v1 (Ollama), http://host:8000/v1 (vLLM). */
  baseUrl: string;
  /** Sent as `Authorization: Bearer`; local servers that need none may get any value. */
  apiKey: string | undefined;
  fetch?: FetchLike | undefined;
  idleTimeoutMs?: number | undefined;
  /**
   * OpenAI's own API refuses `max_tokens` for its reasoning models and wants
   * `max_completion_tokens`; Ollama, vLLM and llama.cpp read `max_tokens`. Default: the former
   * for api.openai.com, the latter elsewhere.
   */
  maxTokensField?: "max_tokens" | "max_completion_tokens" | undefined;
}

interface ChunkToolCall {
  index?: number;
  id?: string;
  function?: { name?: string; arguments?: string };
}

interface ChatChunk {
  choices?: Array<{
    index?: number;
    delta?: { content?: string | null; tool_calls?: ChunkToolCall[] | null };
    finish_reason?: string | null;
  }>;
  usage?: { prompt_tokens?: number; completion_tokens?: number; total_tokens?: number } | null;
  error?: { message?: string } | string;
}

/** OpenAI-compatible Chat Completions over SSE: OpenAI, Ollama, vLLM, llama.cpp server, Gemini's compat endpoint. */
export function createOpenAiProvider(options: OpenAiProviderOptions): LlmProvider {
  const base = options.baseUrl.replace(/\/+$/, "");
  const url = `${base}/chat/completions`;
  const doFetch = options.fetch ?? fetch;
  const idleTimeoutMs = options.idleTimeoutMs ?? 60_000;
  const maxTokensField =
    options.maxTokensField ?? (new URL(base).hostname === "api.openai.com" ? "max_completion_tokens" : "max_tokens");
  const headers: Record<string, string> = options.apiKey ? { authorization: `Bearer ${options.apiKey}` } : {};
  const provider = options.name;

  return {
    name: provider,
    async stream(request: CompletionRequest, streamOptions: StreamOptions = {}): Promise<Completion> {
      const model = request.model;
      const emit = deltaEmitter(streamOptions.onDelta);
      let text = "";
      const calls = new Map<number, { id: string; name: string; args: string }>();
      let finish: string | null = null;
      let usage: ChatChunk["usage"] = null;
      let done = false;

      await postSse(
        {
          fetch: doFetch,
          url,
          headers,
          body: toRequestBody(request, maxTokensField),
          signal: streamOptions.signal,
          provider,
          model,
          idleTimeoutMs,
        },
        (event) => {
          if (event.data === "[DONE]") {
            done = true;
            return STOP;
          }
          const chunk = parseJson<ChatChunk>(event.data, provider, model);
          if (chunk.error !== undefined) {
            const message = typeof chunk.error === "string" ? chunk.error : (chunk.error.message ?? "stream error");
            throw new ProviderError(`${provider} ${model}: ${message}`, { provider, model, retryable: true });
          }
          if (chunk.usage) usage = chunk.usage;
          const choice = chunk.choices?.[0];
          if (!choice) return;
          const piece = choice.delta?.content;
          if (typeof piece === "string" && piece !== "") {
            text += piece;
            emit(piece);
          }
          for (const fragment of choice.delta?.tool_calls ?? []) {
            const i = fragment.index ?? calls.size;
            let call = calls.get(i);
            if (!call) {
              call = { id: "", name: "", args: "" };
              calls.set(i, call);
            }
            if (fragment.id) call.id = fragment.id;
            if (fragment.function?.name) call.name += fragment.function.name;
            if (fragment.function?.arguments) call.args += fragment.function.arguments;
          }
          if (choice.finish_reason) finish = choice.finish_reason;
        },
      );

      if (!done && finish === null) {
        throw new ProviderError(`${provider} ${model}: stream ended before the completion finished`, {
          provider,
          model,
          retryable: true,
        });
      }
      const toolCalls: ToolCall[] = [...calls.entries()]
        .sort(([a], [b]) => a - b)
        .map(([i, c]) => ({
          id: c.id || `call_${i}`,
          name: c.name,
          arguments: parseToolArguments(c.args, provider, model, c.name),
        }));
      const u = usage as ChatChunk["usage"];
      const inputTokens = u?.prompt_tokens ?? estimateInputTokens(request);
      const outputTokens = u?.completion_tokens ?? estimateOutputTokens(text, toolCalls);
      return {
        text,
        toolCalls,
        usage: { inputTokens, outputTokens, totalTokens: u?.total_tokens ?? inputTokens + outputTokens },
        model,
        provider,
        finishReason: toFinishReason(finish, toolCalls.length > 0),
      };
    },
  };
}

function toRequestBody(request: CompletionRequest, maxTokensField: string): Record<string, unknown> {
  const body: Record<string, unknown> = {
    model: request.model,
    messages: request.messages.map(toWireMessage),
    stream: true,
    stream_options: { include_usage: true },
  };
  if (request.tools && request.tools.length > 0) {
    body.tools = request.tools.map((t) => ({
      type: "function",
      function: { name: t.name, description: t.description, parameters: t.parameters },
    }));
  }
  if (request.max_tokens !== undefined) body[maxTokensField] = request.max_tokens;
  if (request.temperature !== undefined) body.temperature = request.temperature;
  return body;
}

function toWireMessage(m: ChatMessage): Record<string, unknown> {
  if (m.role === "tool") return { role: "tool", tool_call_id: m.tool_call_id ?? "", content: m.content };
  if (m.role === "assistant" && m.tool_calls && m.tool_calls.length > 0) {
    return {
      role: "assistant",
      content: m.content === "" ? null : m.content,
      tool_calls: m.tool_calls.map((c) => ({
        id: c.id,
        type: "function",
        function: { name: c.name, arguments: JSON.stringify(c.arguments) },
      })),
    };
  }
  return { role: m.role, content: m.content };
}

function toFinishReason(reason: string | null, hasToolCalls: boolean): FinishReason {
  // Some local servers report "stop" even when the turn ends in tool calls.
  if (hasToolCalls) return "tool_calls";
  switch (reason) {
    case "stop":
    case null:
      return "stop";
    case "length":
      return "length";
    case "tool_calls":
    case "function_call":
      return "tool_calls";
    case "content_filter":
      return "content_filter";
    default:
      return "other";
  }
}
