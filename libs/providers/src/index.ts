export {
  abortReason,
  estimateTokens,
  isAbortError,
  type ChatMessage,
  type ChatRole,
  type Completion,
  type CompletionRequest,
  type FinishReason,
  type LlmProvider,
  type StreamDelta,
  type StreamOptions,
  type ToolCall,
  type ToolSpec,
  type Usage,
} from "./provider.ts";
export { LlmError, ProviderError, isRetryableStatus, type LlmAttempt } from "./errors.ts";
export { createOpenAiProvider, type OpenAiProviderOptions } from "./openai.provider.ts";
export { ANTHROPIC_VERSION, createAnthropicProvider, type AnthropicProviderOptions } from "./anthropic.provider.ts";
export { OFFLINE_MARKERS, createOfflineProvider, type OfflineProviderOptions } from "./offline.provider.ts";
export { decompose, estimateComplexity, type ComplexityEstimate, type PlannedSubtask } from "./offline.intents.ts";
export { createProvider } from "./provider-factory.ts";
export {
  DEFAULT_RETRY_POLICY,
  createLlmRouter,
  type CompleteOptions,
  type LlmRouter,
  type LlmRouterOptions,
  type RetryNotice,
  type RetryPolicy,
  type RoutedCompletion,
} from "./llm-router.ts";
export { llmRouterConfigShape, llmRouterSettings, type LlmRouterConfig } from "./config.ts";
export type { FetchLike } from "./sse-http.ts";
