import { ConfigError, ValidationError } from "@tog/core";
import { MODEL_TIERS, type ModelTier, type ProviderKind } from "./schema.ts";

export interface ProviderEntry {
  name: string;
  displayName: string;
  kind: ProviderKind;
  /** Environment variable holding the API key; undefined for `offline`. */
  apiKeyEnv: string | undefined;
  baseUrl: string | undefined;
}

export interface ModelPrice {
  /** USD per 1K prompt (input) tokens. */
  promptPer1k: number;
  /** USD per 1K completion (output) tokens. */
  completionPer1k: number;
}

export interface ModelEntry {
  id: string;
  provider: string;
  tier: ModelTier;
  contextWindow: number;
  maxOutputTokens: number;
  supportsTools: boolean;
  supportsStreaming: boolean;
  capabilities: readonly string[];
  enabled: boolean;
  /** Taken from the catalog's central `pricing` section. */
  price: ModelPrice;
}

/** Model record of the model service, as its own OpenAPI document (`ModelRecord`) names it. */
export interface ModelRecord {
  id: string;
  name: string;
  tier: ModelTier;
  context_window: number;
  cost_per_1k_prompt_tokens: number;
  cost_per_1k_completion_tokens: number;
  supports_tools: boolean;
  supports_streaming: boolean;
  available: boolean;
}

export type TierTargets = Readonly<Record<ModelTier, number>>;

export interface CatalogDefaults {
  defaultTier: ModelTier;
  complexityModelId: string;
  decompositionModelId: string;
}

export interface ModelSelection {
  complexityModelId: string;
  decompositionModelId: string;
  defaultTier: ModelTier;
}

export interface TokenUsage {
  promptTokens: number;
  completionTokens: number;
}

export interface CatalogData {
  source: string;
  providers: ProviderEntry[];
  models: ModelEntry[];
  tierTargets: TierTargets;
  defaults: CatalogDefaults;
}

export function isModelTier(value: unknown): value is ModelTier {
  return typeof value === "string" && (MODEL_TIERS as readonly string[]).includes(value);
}

/**
 * The loaded, validated catalog. Immutable; every lookup is indexed at construction, so
 * pricing a usage record (`costOf`) is one map lookup and two multiplications.
 */
export class Catalog {
  readonly source: string;
  readonly tierTargets: TierTargets;
  readonly defaults: Readonly<CatalogDefaults>;
  private readonly providerList: readonly ProviderEntry[];
  private readonly providerIndex: ReadonlyMap<string, ProviderEntry>;
  private readonly modelList: readonly ModelEntry[];
  private readonly modelIndex: ReadonlyMap<string, ModelEntry>;
  private readonly modelsByTier: ReadonlyMap<ModelTier, readonly ModelEntry[]>;

  constructor(data: CatalogData) {
    this.source = data.source;
    this.tierTargets = Object.freeze({ ...data.tierTargets });
    this.defaults = Object.freeze({ ...data.defaults });
    this.providerList = Object.freeze(data.providers.map((p) => Object.freeze({ ...p })));
    this.providerIndex = new Map(this.providerList.map((p) => [p.name, p]));
    this.modelList = Object.freeze(
      data.models.map((m) =>
        Object.freeze({ ...m, capabilities: Object.freeze([...m.capabilities]), price: Object.freeze({ ...m.price }) }),
      ),
    );
    this.modelIndex = new Map(this.modelList.map((m) => [m.id, m]));
    this.modelsByTier = new Map(MODEL_TIERS.map((t) => [t, Object.freeze(this.modelList.filter((m) => m.tier === t))]));
  }

  /** Providers in file order. */
  providers(): readonly ProviderEntry[] {
    return this.providerList;
  }

  provider(name: string): ProviderEntry | undefined {
    return this.providerIndex.get(name);
  }

  /** Models in file order, optionally of one tier (enabled or not). */
  models(filter: { tier?: ModelTier | undefined } = {}): readonly ModelEntry[] {
    return filter.tier === undefined ? this.modelList : (this.modelsByTier.get(filter.tier) ?? []);
  }

  model(id: string): ModelEntry | undefined {
    return this.modelIndex.get(id);
  }

  /**
   * Names of the providers usable with these environment values: `offline` providers always,
   * others when their `api_key_env` variable holds a non-blank value. Only names are returned,
   * so callers never carry keys further than they must.
   */
  configuredProviders(keys: Readonly<Record<string, unknown>>): Set<string> {
    const names = new Set<string>();
    for (const p of this.providerList) {
      const key = p.apiKeyEnv === undefined ? undefined : keys[p.apiKeyEnv];
      if (p.kind === "offline" || (typeof key === "string" && key.trim() !== "")) {
        names.add(p.name);
      }
    }
    return names;
  }

  /**
   * The response body of GET /providers/models: every provider of the catalog is a key; a
   * provider that is not configured (and not offline) maps to `[]`; a model is `available`
   * when it is enabled (its provider being configured, or it would not be listed).
   */
  byProvider(options: {
    tier?: ModelTier | undefined;
    configuredProviders: ReadonlySet<string>;
  }): Record<string, ModelRecord[]> {
    const result: Record<string, ModelRecord[]> = {};
    for (const p of this.providerList) result[p.name] = [];
    for (const m of this.models({ tier: options.tier })) {
      const provider = this.providerIndex.get(m.provider);
      if (!provider || !isUsable(provider, options.configuredProviders)) continue;
      result[m.provider]?.push(toRecord(m, true));
    }
    return result;
  }

  /** USD for one call, from the central pricing section. */
  costOf(modelId: string, usage: TokenUsage): number {
    const m = this.modelIndex.get(modelId);
    if (!m) throw new ValidationError(`Unknown model: ${modelId}`);
    const { promptTokens, completionTokens } = usage;
    if (!isTokenCount(promptTokens) || !isTokenCount(completionTokens)) {
      throw new ValidationError(
        `Token counts must be non-negative integers (prompt: ${promptTokens}, completion: ${completionTokens})`,
      );
    }
    const usd = (promptTokens * m.price.promptPer1k + completionTokens * m.price.completionPer1k) / 1000;
    // Binary floats turn 0.3 into 0.30000000000000004; a billionth of a cent is far below any price.
    return Math.round(usd * 1e12) / 1e12;
  }

  /**
   * Resolves the model selection (environment overrides over the file's `defaults`) and
   * checks that both models exist and are enabled and that the tier is valid.
   */
  validateSelection(overrides: {
    complexityModelId?: string | undefined;
    decompositionModelId?: string | undefined;
    defaultTier?: string | undefined;
  }): ModelSelection {
    const complexityModelId = this.requireSelectable(
      "COMPLEXITY_MODEL_ID",
      overrides.complexityModelId ?? this.defaults.complexityModelId,
    );
    const decompositionModelId = this.requireSelectable(
      "DECOMPOSITION_MODEL_ID",
      overrides.decompositionModelId ?? this.defaults.decompositionModelId,
    );
    const tier = overrides.defaultTier ?? this.defaults.defaultTier;
    if (!isModelTier(tier)) {
      throw new ConfigError(`DEFAULT_MODEL_TIER: invalid tier "${tier}" (allowed: ${MODEL_TIERS.join(", ")})`);
    }
    return { complexityModelId, decompositionModelId, defaultTier: tier };
  }

  private requireSelectable(variable: string, id: string): string {
    const m = this.modelIndex.get(id);
    const valid = this.modelList.filter((x) => x.enabled).map((x) => x.id);
    if (!m)
      throw new ConfigError(`${variable}: unknown model id "${id}" in ${this.source} (valid ids: ${valid.join(", ")})`);
    if (!m.enabled)
      throw new ConfigError(
        `${variable}: model "${id}" is disabled in ${this.source} (enabled ids: ${valid.join(", ")})`,
      );
    return id;
  }
}

function isUsable(provider: ProviderEntry, configured: ReadonlySet<string>): boolean {
  return provider.kind === "offline" || configured.has(provider.name);
}

function isTokenCount(n: number): boolean {
  return Number.isInteger(n) && n >= 0;
}

function toRecord(m: ModelEntry, providerUsable: boolean): ModelRecord {
  return {
    id: m.id,
    name: m.id,
    tier: m.tier,
    context_window: m.contextWindow,
    cost_per_1k_prompt_tokens: m.price.promptPer1k,
    cost_per_1k_completion_tokens: m.price.completionPer1k,
    supports_tools: m.supportsTools,
    supports_streaming: m.supportsStreaming,
    available: providerUsable && m.enabled,
  };
}
