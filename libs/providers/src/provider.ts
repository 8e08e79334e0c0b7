// The one interface every model provider implements. Shapes are provider-neutral; each
// adapter translates them to its wire format and back.

export type ChatRole = "system" | "user" | "assistant" | "tool";

export interface ToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface ChatMessage {
  role: ChatRole;
  content: string;
  /** On `tool` messages: the id of the call this message answers. */
  tool_call_id?: string | undefined;
  /** On `assistant` messages: the calls the model made in that turn. */
  tool_calls?: ToolCall[] | undefined;
}

export interface ToolSpec {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface CompletionRequest {
  /** Catalog model id. */
  model: string;
  messages: ChatMessage[];
  tools?: ToolSpec[] | undefined;
  max_tokens?: number | undefined;
  temperature?: number | undefined;
}

export interface StreamDelta {
  text: string;
  /** 0-based position of this chunk in the completion's stream. */
  index: number;
  /**
   * Output tokens streamed so far, by the `estimateTokens` figure of the text so far (remote
   * providers report exact usage only at the end; for the offline provider it is exact, as its
   * usage is defined by the same estimate). Never decreases within one stream.
   */
  totalTokensSoFar: number;
}

export interface StreamOptions {
  signal?: AbortSignal | undefined;
  onDelta?: ((delta: StreamDelta) => void) | undefined;
}

export interface Usage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
}

/** Provider-neutral stop reasons (OpenAI's names; Anthropic's are mapped onto them). */
export type FinishReason = "stop" | "length" | "tool_calls" | "content_filter" | "other";

export interface Completion {
  text: string;
  toolCalls: ToolCall[];
  usage: Usage;
  /** The catalog model id that was requested (the key of its price). */
  model: string;
  /** Catalog provider name (`openai`, `anthropic`, `offline`, ...). */
  provider: string;
  finishReason: FinishReason;
}

export interface LlmProvider {
  /** Catalog provider name. */
  readonly name: string;
  stream(request: CompletionRequest, options?: StreamOptions): Promise<Completion>;
}

/**
 * The documented token estimate used wherever a provider gives no count: one token per
 * 4 characters, rounded up (OpenAI's rule of thumb for English text).
 */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / 4);
}

/** True for the rejection of an aborted fetch/stream/timer (DOMException `AbortError`). */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === "AbortError";
}

/** The rejection to use when `signal` is aborted: its reason, or a standard AbortError. */
export function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("The operation was aborted", "AbortError");
}

/**
 * Numbers text chunks for `onDelta` and keeps the running token estimate. Empty chunks
 * (role-only or keep-alive frames) are not reported.
 */
export function deltaEmitter(onDelta: StreamOptions["onDelta"]): (text: string) => void {
  let index = 0;
  let chars = 0;
  return (text) => {
    if (text === "" || onDelta === undefined) return;
    chars += text.length;
    onDelta({ text, index: index++, totalTokensSoFar: Math.ceil(chars / 4) });
  };
}
