import type { z } from "zod";
import { envBoolean, envInt, type ConfigShape } from "@tog/core";
import type { LlmRouterOptions } from "./llm-router.ts";

/** Variables of the LLM router, for the shape of every service that runs model calls (workers). */
export const llmRouterConfigShape = {
  LLM_MAX_RETRIES: envInt(2, 0, 10).describe(
    "Repeats of one model after a retryable provider failure (429, 5xx, network) before falling back to the next model of the tier.",
  ),
  LLM_RETRY_BASE_DELAY_MS: envInt(250, 0, 60_000).describe(
    "First retry backoff; doubles per retry, jittered to 50-100 %.",
  ),
  LLM_RETRY_MAX_DELAY_MS: envInt(4_000, 0, 120_000).describe(
    "Longest retry backoff, also the cap on a provider's Retry-After.",
  ),
  LLM_STREAM_IDLE_TIMEOUT_MS: envInt(60_000, 1_000).describe("A provider stream silent this long fails (retryably)."),
  LLM_OFFLINE_FALLBACK: envBoolean(false).describe(
    "1: the offline model ends every tier's fallback chain even when provider keys are set. 0 (default): offline is used only when no provider key is configured.",
  ),
  OFFLINE_CHUNK_DELAY_MS: envInt(0, 0, 10_000).describe(
    "Pause before each chunk the offline provider streams (0: no pause); for demos and cancellation tests.",
  ),
} satisfies ConfigShape;

export type LlmRouterConfig = z.infer<z.ZodObject<typeof llmRouterConfigShape>>;

/** The router options a loaded config sets (catalog, keys and logger come from the caller). */
export function llmRouterSettings(
  config: LlmRouterConfig,
): Pick<LlmRouterOptions, "retry" | "idleTimeoutMs" | "offlineFallback" | "offline"> {
  return {
    retry: {
      maxRetries: config.LLM_MAX_RETRIES,
      baseDelayMs: config.LLM_RETRY_BASE_DELAY_MS,
      maxDelayMs: config.LLM_RETRY_MAX_DELAY_MS,
    },
    idleTimeoutMs: config.LLM_STREAM_IDLE_TIMEOUT_MS,
    offlineFallback: config.LLM_OFFLINE_FALLBACK,
    offline: { chunkDelayMs: config.OFFLINE_CHUNK_DELAY_MS },
  };
}
