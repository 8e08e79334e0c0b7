import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ConfigError } from "@tog/core";
import { DEFAULT_CATALOG_PATH, MODEL_TIERS, loadCatalog, parseCatalog } from "@tog/catalog";
import { fixture, toYaml } from "./fixture.ts";

function loadError(text: string): ConfigError {
  try {
    parseCatalog(text, "test.yaml");
  } catch (err) {
    expect(err).toBeInstanceOf(ConfigError);
    return err as ConfigError;
  }
  throw new Error("expected a ConfigError");
}

describe("loadCatalog: the shipped catalog", () => {
  const catalog = loadCatalog();

  it("is the default path, resolved next to the lib", () => {
    expect(DEFAULT_CATALOG_PATH.endsWith("libs/catalog/models.yaml")).toBe(true);
    expect(catalog.source).toBe(DEFAULT_CATALOG_PATH);
  });

  it("offers every tier from every provider, with the contract's tier targets", () => {
    expect(catalog.providers().map((p) => p.name)).toEqual(["openai", "anthropic", "google", "offline"]);
    for (const provider of ["openai", "anthropic", "google", "offline"]) {
      for (const tier of MODEL_TIERS) {
        expect(
          catalog.models({ tier }).some((m) => m.provider === provider),
          `${provider}/${tier}`,
        ).toBe(true);
      }
    }
    expect(catalog.tierTargets).toEqual({ small: 50, medium: 40, large: 10 });
    expect(catalog.defaults.defaultTier).toBe("small");
  });

  it("prices every paid model and nothing offline", () => {
    for (const m of catalog.models()) {
      if (m.provider === "offline") expect(m.price).toEqual({ promptPer1k: 0, completionPer1k: 0 });
      else {
        expect(m.price.promptPer1k, m.id).toBeGreaterThan(0);
        expect(m.price.completionPer1k, m.id).toBeGreaterThan(m.price.promptPer1k);
      }
    }
    // Published prices: $1.25 / $10 per 1M tokens.
    expect(catalog.model("gpt-5")?.price).toEqual({ promptPer1k: 0.00125, completionPer1k: 0.01 });
    expect(catalog.model("claude-sonnet-4-5")?.tier).toBe("medium");
  });

  it("reads a file given by path", () => {
    const dir = mkdtempSync(join(tmpdir(), "catalog-"));
    const path = join(dir, "custom.yaml");
    writeFileSync(path, toYaml(fixture()));
    const c = loadCatalog(path);
    expect(c.source).toBe(path);
    expect(c.models().map((m) => m.id)).toEqual(["o-small", "o-large", "o-old", "a-medium", "off-small"]);
  });
});

describe("loadCatalog: validation errors", () => {
  it("names a missing file", () => {
    expect(() => loadCatalog("/nonexistent/models.yaml")).toThrow(
      /Cannot read model catalog \/nonexistent\/models\.yaml: ENOENT/,
    );
  });

  it("reports YAML syntax errors", () => {
    expect(loadError("providers: [unclosed\n").message).toMatch(/^Invalid model catalog test\.yaml: YAML syntax/);
  });

  it("refuses a model without a price", () => {
    const f = fixture();
    delete f.pricing["a-medium"];
    expect(loadError(toYaml(f)).message).toContain("pricing.a-medium: missing");
  });

  it("prices offline models at 0 without an entry", () => {
    const c = parseCatalog(toYaml(fixture()));
    expect(c.model("off-small")?.price).toEqual({ promptPer1k: 0, completionPer1k: 0 });
  });

  it("refuses a price for a model that does not exist", () => {
    const f = fixture();
    f.pricing["o-smal"] = { prompt_per_1k: 1, completion_per_1k: 1 };
    expect(loadError(toYaml(f)).message).toContain("pricing.o-smal: no model with this id");
  });

  it("refuses negative prices and misspelt price keys", () => {
    const f = fixture();
    f.pricing["o-small"] = { prompt_per_1k: -1, completion_per_1k: 0.1 };
    f.pricing["o-large"] = { prompt_per_1K: 0.1, completion_per_1k: 0.1 };
    const msg = loadError(toYaml(f)).message;
    expect(msg).toContain("pricing.o-small.prompt_per_1k");
    expect(msg).toMatch(/pricing\.o-large.*prompt_per_1K/);
  });

  it("refuses tier targets that do not sum to 100", () => {
    const f = fixture();
    f.tier_targets = { small: 50, medium: 40, large: 20 };
    expect(loadError(toYaml(f)).message).toContain(
      "tier_targets: must sum to 100 (small 50 + medium 40 + large 20 = 110)",
    );
  });

  it("refuses a model of an unknown provider, listing the known ones", () => {
    const f = fixture();
    f.models.push({ ...f.models[0], id: "m-x", provider: "mistral" });
    f.pricing["m-x"] = { prompt_per_1k: 0.001, completion_per_1k: 0.002 };
    expect(loadError(toYaml(f)).message).toContain(
      'models[5] (m-x).provider: unknown provider "mistral" (known: openai, anthropic, offline)',
    );
  });

  it("refuses duplicate ids, bad tiers and unknown defaults, all in one message", () => {
    const f = fixture();
    f.models.push({ ...f.models[0] });
    f.defaults.complexity_model_id = "nope";
    const msg = loadError(toYaml(f)).message;
    expect(msg).toContain('duplicate model id "o-small"');
    expect(msg).toContain('defaults.complexity_model_id: unknown model id "nope"');

    const g = fixture();
    g.models[0] = { ...g.models[0], tier: "huge" };
    expect(loadError(toYaml(g)).message).toContain("models[0].tier");
  });

  it("requires a key variable and base URL for non-offline providers", () => {
    const f = fixture();
    delete f.providers.openai?.api_key_env;
    delete f.providers.openai?.base_url;
    const msg = loadError(toYaml(f)).message;
    expect(msg).toContain("providers.openai.api_key_env: required for kind openai");
    expect(msg).toContain("providers.openai.base_url: required for kind openai");
  });

  it("refuses unknown keys and an empty file", () => {
    const f = { ...fixture(), extra: true };
    expect(loadError(toYaml(f)).message).toMatch(/extra/);
    expect(loadError("").message).toContain("providers");
  });
});
