import { ProviderError } from "./errors.ts";
import type { ChatMessage, CompletionRequest, ToolCall } from "./provider.ts";

/** Parses a tool call's streamed argument text into an object ("" means no arguments). */
export function parseToolArguments(
  raw: string,
  provider: string,
  model: string,
  tool: string,
): Record<string, unknown> {
  if (raw.trim() === "") return {};
  let value: unknown;
  try {
    value = JSON.parse(raw);
  } catch (err) {
    throw new ProviderError(`${provider} ${model}: tool call ${tool} has invalid JSON arguments`, {
      provider,
      model,
      retryable: false,
      cause: err,
    });
  }
  if (value === null || typeof value !== "object" || Array.isArray(value)) {
    throw new ProviderError(`${provider} ${model}: tool call ${tool} arguments are not a JSON object`, {
      provider,
      model,
      retryable: false,
    });
  }
  return value as Record<string, unknown>;
}

/** Input tokens by the documented estimate, for servers that report no usage. */
export function estimateInputTokens(request: CompletionRequest): number {
  let chars = 0;
  for (const m of request.messages) chars += messageChars(m);
  if (request.tools && request.tools.length > 0) chars += JSON.stringify(request.tools).length;
  return Math.ceil(chars / 4);
}

/** Output tokens by the documented estimate: the text plus the tool calls' JSON. */
export function estimateOutputTokens(text: string, toolCalls: readonly ToolCall[]): number {
  let chars = text.length;
  for (const c of toolCalls) chars += c.name.length + JSON.stringify(c.arguments).length;
  return Math.ceil(chars / 4);
}

function messageChars(m: ChatMessage): number {
  let chars = m.content.length;
  if (m.tool_calls) for (const c of m.tool_calls) chars += c.name.length + JSON.stringify(c.arguments).length;
  return chars;
}
