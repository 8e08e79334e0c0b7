import type { ProviderEntry } from "@tog/catalog";
import { ConfigError } from "@tog/core";
import { createAnthropicProvider } from "./anthropic.provider.ts";
import { createOfflineProvider, type OfflineProviderOptions } from "./offline.provider.ts";
import { createOpenAiProvider } from "./openai.provider.ts";
import type { LlmProvider } from "./provider.ts";
import type { FetchLike } from "./sse-http.ts";

export interface ProviderFactoryOptions {
  apiKey: string | undefined;
  fetch?: FetchLike | undefined;
  idleTimeoutMs?: number | undefined;
  offline?: OfflineProviderOptions | undefined;
}

/**
 * The adapter for a catalog provider entry. `google` goes through Gemini's OpenAI-compatible
 * endpoint (`<base_url>/openai/chat/completions`), so one adapter covers three kinds.
 */
export function createProvider(entry: ProviderEntry, options: ProviderFactoryOptions): LlmProvider {
  const common = {
    name: entry.name,
    apiKey: options.apiKey,
    fetch: options.fetch,
    idleTimeoutMs: options.idleTimeoutMs,
  };
  switch (entry.kind) {
    case "offline":
      return createOfflineProvider({ ...options.offline, name: entry.name });
    case "openai":
      return createOpenAiProvider({ ...common, baseUrl: requireBaseUrl(entry) });
    case "google": {
      const base = requireBaseUrl(entry).replace(/\/+$/, "");
      return createOpenAiProvider({ ...common, baseUrl: base.endsWith("/openai") ? base : `${base}/openai` });
    }
    case "anthropic":
      return createAnthropicProvider({ ...common, baseUrl: requireBaseUrl(entry) });
  }
}

function requireBaseUrl(entry: ProviderEntry): string {
  // The catalog loader already refuses a non-offline provider without base_url.
  if (entry.baseUrl === undefined)
    throw new ConfigError(`providers.${entry.name}.base_url: required for kind ${entry.kind}`);
  return entry.baseUrl;
}
