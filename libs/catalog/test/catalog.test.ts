import { describe, expect, it } from "vitest";
import { ConfigError, ValidationError } from "@tog/core";
import { loadCatalog, parseCatalog } from "@tog/catalog";
import { fixture, toYaml } from "./fixture.ts";

const RECORD_KEYS = [
  "id",
  "name",
  "tier",
  "context_window",
  "cost_per_1k_prompt_tokens",
  "cost_per_1k_completion_tokens",
  "supports_tools",
  "supports_streaming",
  "available",
];

const catalog = parseCatalog(toYaml(fixture()), "fixture.yaml");

describe("Catalog lookups", () => {
  it("lists models by tier in file order and finds one by id", () => {
    expect(catalog.models({ tier: "small" }).map((m) => m.id)).toEqual(["o-small", "off-small"]);
    expect(catalog.models({ tier: "medium" }).map((m) => m.id)).toEqual(["o-old", "a-medium"]);
    expect(catalog.models().length).toBe(5);
    expect(catalog.model("a-medium")).toMatchObject({
      provider: "anthropic",
      tier: "medium",
      contextWindow: 128000,
      enabled: true,
    });
    expect(catalog.model("missing")).toBeUndefined();
  });
});

describe("costOf", () => {
  it("multiplies tokens by the central per-1K prices", () => {
    // 1000 × 0.00125/1K + 1000 × 0.01/1K
    expect(catalog.costOf("o-large", { promptTokens: 1000, completionTokens: 1000 })).toBe(0.01125);
    // 2500 × 0.003/1K + 400 × 0.015/1K = 0.0075 + 0.006
    expect(catalog.costOf("a-medium", { promptTokens: 2500, completionTokens: 400 })).toBe(0.0135);
    // 3 × 0.0001/1K + 7 × 0.0004/1K, no float noise
    expect(catalog.costOf("o-small", { promptTokens: 3, completionTokens: 7 })).toBe(0.0000031);
    expect(catalog.costOf("o-small", { promptTokens: 0, completionTokens: 0 })).toBe(0);
    expect(catalog.costOf("off-small", { promptTokens: 1_000_000, completionTokens: 1_000_000 })).toBe(0);
  });

  it("prices the shipped catalog from its pricing section", () => {
    const shipped = loadCatalog();
    // claude-opus-4-1: $15 / $75 per 1M → 2000 × 0.015/1K + 500 × 0.075/1K
    expect(shipped.costOf("claude-opus-4-1", { promptTokens: 2000, completionTokens: 500 })).toBe(0.0675);
  });

  it("refuses unknown models and impossible token counts", () => {
    expect(() => catalog.costOf("nope", { promptTokens: 1, completionTokens: 1 })).toThrow(ValidationError);
    expect(() => catalog.costOf("nope", { promptTokens: 1, completionTokens: 1 })).toThrow("Unknown model: nope");
    expect(() => catalog.costOf("o-small", { promptTokens: -1, completionTokens: 1 })).toThrow(ValidationError);
    expect(() => catalog.costOf("o-small", { promptTokens: 1.5, completionTokens: 1 })).toThrow(ValidationError);
  });
});

describe("byProvider", () => {
  it("without keys lists every provider, only offline with models", () => {
    const configured = catalog.configuredProviders({});
    expect([...configured]).toEqual(["offline"]);
    const body = catalog.byProvider({ configuredProviders: configured });
    expect(Object.keys(body)).toEqual(["openai", "anthropic", "offline"]);
    expect(body.openai).toEqual([]);
    expect(body.anthropic).toEqual([]);
    expect(body.offline).toEqual([
      {
        id: "off-small",
        name: "off-small",
        tier: "small",
        context_window: 128000,
        cost_per_1k_prompt_tokens: 0,
        cost_per_1k_completion_tokens: 0,
        supports_tools: true,
        supports_streaming: true,
        available: true,
      },
    ]);
  });

  it("with a key lists that provider's models; disabled ones are unavailable; blank keys do not count", () => {
    const configured = catalog.configuredProviders({ OPENAI_API_KEY: "sk-test", ANTHROPIC_API_KEY: "  " });
    expect([...configured].sort()).toEqual(["offline", "openai"]);
    const body = catalog.byProvider({ configuredProviders: configured });
    expect(body.anthropic).toEqual([]);
    expect(body.openai?.map((r) => [r.id, r.available])).toEqual([
      ["o-small", true],
      ["o-large", true],
      ["o-old", false],
    ]);
    for (const r of Object.values(body).flat()) expect(Object.keys(r)).toEqual(RECORD_KEYS);
    expect(body.openai?.[1]).toMatchObject({
      cost_per_1k_prompt_tokens: 0.00125,
      cost_per_1k_completion_tokens: 0.01,
      supports_streaming: false,
    });
  });

  it("filters by tier and keeps every provider key", () => {
    const configured = new Set(["openai", "anthropic", "offline"]);
    const large = catalog.byProvider({ tier: "large", configuredProviders: configured });
    expect(large).toEqual({
      openai: [expect.objectContaining({ id: "o-large", tier: "large" })],
      anthropic: [],
      offline: [],
    });
    const medium = catalog.byProvider({ tier: "medium", configuredProviders: configured });
    expect(
      Object.values(medium)
        .flat()
        .map((r) => r.id),
    ).toEqual(["o-old", "a-medium"]);
  });
});

describe("validateSelection", () => {
  it("uses the file's defaults and applies overrides", () => {
    expect(catalog.validateSelection({})).toEqual({
      complexityModelId: "o-small",
      decompositionModelId: "a-medium",
      defaultTier: "small",
    });
    expect(
      catalog.validateSelection({
        complexityModelId: "off-small",
        decompositionModelId: "o-large",
        defaultTier: "large",
      }),
    ).toEqual({ complexityModelId: "off-small", decompositionModelId: "o-large", defaultTier: "large" });
  });

  it("names an unknown id and lists the valid ones", () => {
    expect(() => catalog.validateSelection({ complexityModelId: "gpt-9" })).toThrow(ConfigError);
    expect(() => catalog.validateSelection({ decompositionModelId: "gpt-9" })).toThrow(
      'DECOMPOSITION_MODEL_ID: unknown model id "gpt-9" in fixture.yaml (valid ids: o-small, o-large, a-medium, off-small)',
    );
    expect(() => catalog.validateSelection({ complexityModelId: "o-old" })).toThrow(
      'COMPLEXITY_MODEL_ID: model "o-old" is disabled',
    );
  });

  it("refuses a bad tier", () => {
    expect(() => catalog.validateSelection({ defaultTier: "huge" })).toThrow(
      'DEFAULT_MODEL_TIER: invalid tier "huge" (allowed: small, medium, large)',
    );
  });
});
