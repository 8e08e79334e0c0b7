import { setTimeout as sleep } from "node:timers/promises";
import { isModelTier, MODEL_TIERS, type Catalog, type ModelEntry, type ModelTier } from "@tog/catalog";
import { ValidationError, type Logger } from "@tog/core";
import { LlmError, ProviderError, type LlmAttempt } from "./errors.ts";
import type { OfflineProviderOptions } from "./offline.provider.ts";
import { createProvider } from "./provider-factory.ts";
import {
  abortReason,
  isAbortError,
  type Completion,
  type CompletionRequest,
  type LlmProvider,
  type StreamOptions,
} from "./provider.ts";
import type { FetchLike } from "./sse-http.ts";

// Workers call this router in-process instead of the model catalog service over HTTP: the
// hot path saves a network hop and a second point of failure, while keys and prices still
// come from the one catalog (libs/catalog, the same lib and models.yaml that the model
// catalog service serves) and the same environment variables.

export interface RetryPolicy {
  /** Repeats of one model after a retryable failure (429, 408, 5xx, network, idle stream), before falling back. */
  maxRetries: number;
  /** Backoff before retry n (0-based) is min(maxDelayMs, baseDelayMs * 2^n), then jittered to 50-100 % of that. */
  baseDelayMs: number;
  maxDelayMs: number;
}

export const DEFAULT_RETRY_POLICY: Readonly<RetryPolicy> = Object.freeze({
  maxRetries: 2,
  baseDelayMs: 250,
  maxDelayMs: 4_000,
});

export interface LlmRouterOptions {
  catalog: Catalog;
  /** Environment values by variable name; a provider is usable when its `api_key_env` value is non-blank. */
  apiKeys: Readonly<Record<string, string | undefined>>;
  fetch?: FetchLike | undefined;
  logger: Logger;
  retry?: Partial<RetryPolicy> | undefined;
  /** A provider stream silent this long fails (retryably). Default 60 s. */
  idleTimeoutMs?: number | undefined;
  offline?: OfflineProviderOptions | undefined;
  /**
   * Append the tier's offline model to every chain even when real providers are configured.
   * Off by default: a canned offline answer must never pass for a real model's silently.
   */
  offlineFallback?: boolean | undefined;
  /** Source of jitter; tests pin it. */
  random?: (() => number) | undefined;
}

export interface RetryNotice {
  /** Failures so far in this call (1 for the first). */
  attempt: number;
  error: Error;
  /** The model that failed and the one tried next (the same one for a retry). */
  model: string;
  provider: string;
  nextModel: string;
  nextProvider: string;
  action: "retry" | "fallback";
  delayMs: number;
}

export interface CompleteOptions {
  tier: ModelTier;
  /** Pins one model: it is retried, never replaced. */
  modelOverride?: string | undefined;
  /** Pins one provider: fallback stays among its models of the tier. */
  providerOverride?: string | undefined;
  request: Omit<CompletionRequest, "model">;
  signal?: AbortSignal | undefined;
  /** Chunk indexes keep counting across retries, so LLM_PARTIAL chunk_index never repeats. */
  onDelta?: StreamOptions["onDelta"];
  /** Before every retry or fallback: the task emits ERROR_RECOVERY from it. */
  onRetry?: ((notice: RetryNotice) => void) | undefined;
}

export interface RoutedCompletion extends Completion {
  tier: ModelTier;
  /** USD by the catalog's central pricing (`catalog.costOf`). */
  costUsd: number;
  /** Calls made beyond the first (retries plus fallbacks). */
  retryCount: number;
}

export interface LlmRouter {
  complete(options: CompleteOptions): Promise<RoutedCompletion>;
  /** The models `complete` would try, in order. Throws ValidationError for unusable overrides. */
  candidates(
    options: Pick<CompleteOptions, "tier" | "modelOverride" | "providerOverride"> & { tools?: boolean },
  ): readonly ModelEntry[];
  /** Providers with a key (plus offline), by catalog name. */
  readonly configuredProviders: ReadonlySet<string>;
  /** True when no real provider has a key: every tier runs on the offline provider. */
  readonly offlineOnly: boolean;
}

/**
 * Model selection and resilience. Without overrides a tier's chain is its enabled models of
 * the configured real providers in catalog order; when no real provider has a key at all it
 * is the tier's offline model. Each model gets `maxRetries` repeats for retryable failures
 * (exponential backoff with jitter, Retry-After honoured up to maxDelayMs); any other failure,
 * or exhausted retries, falls back to the next model at once. Requests with tools skip models
 * without tool support.
 */
export function createLlmRouter(options: LlmRouterOptions): LlmRouter {
  const { catalog, logger } = options;
  const policy: RetryPolicy = { ...DEFAULT_RETRY_POLICY, ...options.retry };
  const random = options.random ?? Math.random;
  const configuredProviders = catalog.configuredProviders(options.apiKeys);

  // Adapters are built once; keys stay inside them.
  const providers = new Map<string, LlmProvider>();
  for (const entry of catalog.providers()) {
    if (!configuredProviders.has(entry.name)) continue;
    const apiKey = entry.apiKeyEnv === undefined ? undefined : options.apiKeys[entry.apiKeyEnv]?.trim();
    providers.set(
      entry.name,
      createProvider(entry, {
        apiKey,
        fetch: options.fetch,
        idleTimeoutMs: options.idleTimeoutMs,
        offline: options.offline,
      }),
    );
  }
  const isOffline = (m: ModelEntry) => catalog.provider(m.provider)?.kind === "offline";
  const offlineOnly = ![...configuredProviders].some((name) => catalog.provider(name)?.kind !== "offline");
  const chains = new Map<ModelTier, readonly ModelEntry[]>(
    MODEL_TIERS.map((tier) => {
      const usable = catalog.models({ tier }).filter((m) => m.enabled && providers.has(m.provider));
      const real = usable.filter((m) => !isOffline(m));
      const offline = usable.filter(isOffline);
      return [tier, offlineOnly ? offline : options.offlineFallback ? [...real, ...offline] : real];
    }),
  );

  function candidates(o: {
    tier: ModelTier;
    modelOverride?: string | undefined;
    providerOverride?: string | undefined;
    tools?: boolean;
  }): readonly ModelEntry[] {
    if (!isModelTier(o.tier))
      throw new ValidationError(`Invalid model tier: ${String(o.tier)} (allowed: ${MODEL_TIERS.join(", ")})`);
    if (o.modelOverride !== undefined) {
      const m = catalog.model(o.modelOverride);
      if (!m) throw new ValidationError(`Unknown model: ${o.modelOverride}`);
      if (!m.enabled) throw new ValidationError(`Model ${m.id} is disabled`);
      if (!providers.has(m.provider))
        throw new ValidationError(`Model ${m.id} is unavailable: provider ${m.provider} has no API key configured`);
      return [m];
    }
    let chain = chains.get(o.tier) ?? [];
    if (o.providerOverride !== undefined) {
      const p = catalog.provider(o.providerOverride);
      if (!p) throw new ValidationError(`Unknown provider: ${o.providerOverride}`);
      if (!providers.has(p.name)) throw new ValidationError(`Provider ${p.name} is unavailable: no API key configured`);
      chain = catalog.models({ tier: o.tier }).filter((m) => m.enabled && m.provider === p.name);
      if (chain.length === 0) throw new ValidationError(`Provider ${p.name} has no enabled model in tier ${o.tier}`);
    }
    return o.tools ? chain.filter((m) => m.supportsTools) : chain;
  }

  async function complete(o: CompleteOptions): Promise<RoutedCompletion> {
    const hasTools = (o.request.tools?.length ?? 0) > 0;
    const chain = candidates({
      tier: o.tier,
      modelOverride: o.modelOverride,
      providerOverride: o.providerOverride,
      tools: hasTools,
    });
    const { signal, onRetry } = o;
    let delivered = 0;
    const onDelta: StreamOptions["onDelta"] = o.onDelta && ((d) => o.onDelta?.({ ...d, index: delivered++ }));
    const attempts: LlmAttempt[] = [];
    let lastError: ProviderError | undefined;

    if (chain.length === 0) {
      throw new LlmError(`No model available for tier ${o.tier}${hasTools ? " with tool support" : ""}`, {
        retryCount: 0,
        maxRetries: policy.maxRetries,
        recoverable: false,
        attempts,
      });
    }

    for (let m = 0; m < chain.length; m++) {
      const model = chain[m] as ModelEntry;
      const provider = providers.get(model.provider) as LlmProvider;
      for (let retry = 0; ; retry++) {
        if (signal?.aborted) throw abortReason(signal);
        try {
          const completion = await provider.stream({ ...o.request, model: model.id }, { signal, onDelta });
          return {
            ...completion,
            tier: model.tier,
            costUsd: costOf(model.id, completion),
            retryCount: attempts.length,
          };
        } catch (err) {
          if (signal?.aborted) throw abortReason(signal);
          if (isAbortError(err)) throw err;
          const error = asProviderError(err, model);
          lastError = error;
          attempts.push({ model: model.id, provider: model.provider, status: error.status, error: error.message });
          const again = error.retryable && retry < policy.maxRetries;
          const next = again ? model : chain[m + 1];
          if (next === undefined) break;
          const delayMs = again ? backoff(retry, error.retryAfterMs) : 0;
          const notice: RetryNotice = {
            attempt: attempts.length,
            error,
            model: model.id,
            provider: model.provider,
            nextModel: next.id,
            nextProvider: next.provider,
            action: again ? "retry" : "fallback",
            delayMs,
          };
          logger.warn(
            {
              model: model.id,
              provider: model.provider,
              status: error.status,
              attempt: notice.attempt,
              action: notice.action,
              next_model: next.id,
              delay_ms: delayMs,
              error: error.message,
            },
            "LLM call failed",
          );
          onRetry?.(notice);
          if (delayMs > 0)
            await sleep(delayMs, undefined, { signal }).catch((e: unknown) =>
              Promise.reject(signal?.aborted ? abortReason(signal) : e),
            );
          if (!again) break;
        }
      }
    }

    const pinned = o.modelOverride !== undefined ? `model ${o.modelOverride}` : `tier ${o.tier}`;
    throw new LlmError(
      `LLM call failed for ${pinned} after ${attempts.length} attempt${attempts.length === 1 ? "" : "s"}: ${lastError?.message ?? "unknown error"}`,
      {
        retryCount: Math.max(0, attempts.length - 1),
        maxRetries: policy.maxRetries,
        recoverable: lastError?.retryable ?? false,
        attempts,
        cause: lastError,
      },
    );
  }

  function backoff(retry: number, retryAfterMs: number | undefined): number {
    const exp = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** retry);
    const jittered = Math.round(exp * (0.5 + random() * 0.5));
    return Math.min(policy.maxDelayMs, Math.max(jittered, retryAfterMs ?? 0));
  }

  function costOf(modelId: string, c: Completion): number {
    return catalog.costOf(modelId, { promptTokens: c.usage.inputTokens, completionTokens: c.usage.outputTokens });
  }

  return { complete, candidates, configuredProviders, offlineOnly };
}

function asProviderError(err: unknown, model: ModelEntry): ProviderError {
  if (err instanceof ProviderError) return err;
  // An adapter bug or an unexpected value: not worth repeating, but another model may work.
  const message = err instanceof Error ? err.message : String(err);
  return new ProviderError(`${model.provider} ${model.id}: ${message}`, {
    provider: model.provider,
    model: model.id,
    retryable: false,
    cause: err,
  });
}
