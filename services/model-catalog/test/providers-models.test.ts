import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "@tog/catalog";
import { failedStart, startService, type RunningService } from "./service.ts";

const RECORD_KEYS = [
  "available",
  "context_window",
  "cost_per_1k_completion_tokens",
  "cost_per_1k_prompt_tokens",
  "id",
  "name",
  "supports_streaming",
  "supports_tools",
  "tier",
];
const shipped = loadCatalog();

type Body = Record<string, Array<Record<string, unknown>>>;

async function getModels(base: string, query = ""): Promise<{ status: number; type: string | null; body: Body }> {
  const res = await fetch(`${base}/providers/models${query}`);
  return { status: res.status, type: res.headers.get("content-type"), body: (await res.json()) as Body };
}

function expectRecordsMatchCatalog(body: Body) {
  for (const [provider, records] of Object.entries(body)) {
    for (const r of records) {
      expect(Object.keys(r).sort()).toEqual(RECORD_KEYS);
      const m = shipped.model(r.id as string);
      expect(m, String(r.id)).toBeDefined();
      expect(r).toEqual({
        id: m?.id,
        name: m?.id,
        tier: m?.tier,
        context_window: m?.contextWindow,
        cost_per_1k_prompt_tokens: m?.price.promptPer1k,
        cost_per_1k_completion_tokens: m?.price.completionPer1k,
        supports_tools: m?.supportsTools,
        supports_streaming: m?.supportsStreaming,
        available: true,
      });
      expect(m?.provider).toBe(provider);
    }
  }
}

describe("GET /providers/models (shipped catalog)", () => {
  let noKeys: RunningService;
  let openai: RunningService;

  beforeAll(async () => {
    [noKeys, openai] = await Promise.all([startService(), startService({ OPENAI_API_KEY: "sk-fake-test-key" })]);
  });
  afterAll(async () => {
    await Promise.all([noKeys?.stop(), openai?.stop()]);
  });

  it("without keys: every provider is a key, only offline has models, all available", async () => {
    const { status, type, body } = await getModels(noKeys.url);
    expect(status).toBe(200);
    expect(type).toMatch(/^application\/json/);
    expect(Object.keys(body)).toEqual(["openai", "anthropic", "google", "offline"]);
    expect(body.openai).toEqual([]);
    expect(body.anthropic).toEqual([]);
    expect(body.google).toEqual([]);
    expect(body.offline?.map((r) => r.id)).toEqual(["offline-small", "offline-medium", "offline-large"]);
    expectRecordsMatchCatalog(body);
  });

  it("with a (fake) OpenAI key: OpenAI's models are listed and available, other keyless providers stay empty", async () => {
    const { status, body } = await getModels(openai.url);
    expect(status).toBe(200);
    expect(body.openai?.map((r) => r.id)).toEqual(
      shipped
        .models()
        .filter((m) => m.provider === "openai")
        .map((m) => m.id),
    );
    expect(body.openai?.length).toBeGreaterThanOrEqual(5);
    expect(body.anthropic).toEqual([]);
    expect(body.offline?.length).toBe(3);
    expectRecordsMatchCatalog(body);
    expect(body.openai?.find((r) => r.id === "gpt-5")).toMatchObject({
      cost_per_1k_prompt_tokens: 0.00125,
      cost_per_1k_completion_tokens: 0.01,
    });
  });

  it("filters by tier, keeping every provider key", async () => {
    for (const tier of ["small", "medium", "large"]) {
      const { status, body } = await getModels(openai.url, `?tier=${tier}`);
      expect(status).toBe(200);
      expect(Object.keys(body)).toEqual(["openai", "anthropic", "google", "offline"]);
      const records = Object.values(body).flat();
      expect(records.length).toBeGreaterThan(1);
      expect(records.every((r) => r.tier === tier)).toBe(true);
      expect(body.offline?.map((r) => r.id)).toEqual([`offline-${tier}`]);
    }
    // An empty value is no filter.
    expect((await getModels(openai.url, "?tier=")).body).toEqual((await getModels(openai.url)).body);
  });

  it("answers an invalid tier with 400 and the allowed values", async () => {
    const res = await getModels(noKeys.url, "?tier=huge");
    expect(res.status).toBe(400);
    expect(res.type).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: "Invalid tier: huge (allowed: small, medium, large)" });
    expect((await getModels(noKeys.url, "?tier=SMALL")).body).toEqual({
      error: "Invalid tier: SMALL (allowed: small, medium, large)",
    });
  });

  it("has a health probe and JSON 404s", async () => {
    const health = await fetch(`${noKeys.url}/health`);
    expect(health.status).toBe(200);
    expect(await health.json()).toEqual({ status: "ok" });
    const missing = await fetch(`${noKeys.url}/api/v1/providers/models`);
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "Not found" });
  });

  it("serves its own OpenAPI document (not part of the gateway's) at GET /openapi.json", async () => {
    const res = await fetch(`${noKeys.url}/openapi.json`);
    expect(res.status).toBe(200);
    const doc = (await res.json()) as {
      openapi: string;
      paths: Record<string, Record<string, unknown>>;
      components: { schemas: Record<string, unknown> };
    };
    expect(doc.openapi).toMatch(/^3\.0\./);
    expect(Object.keys(doc.paths)).toContain("/providers/models");
    expect(Object.keys(doc.paths["/providers/models"]!)).toContain("get");
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(["ModelRecord", "ModelCatalog"]));
  });

  it("never logs the API key", () => {
    expect(openai.output()).toContain("model catalog listening");
    expect(openai.output()).not.toContain("sk-fake-test-key");
  });
});

describe("MODELS_CONFIG_PATH", () => {
  let custom: RunningService;
  const dir = mkdtempSync(join(tmpdir(), "model-catalog-"));
  const path = join(dir, "models.yaml");

  beforeAll(async () => {
    writeFileSync(
      path,
      `
providers:
  acme:
    display_name: Acme (OpenAI-compatible)
    kind: openai
    api_key_env: ACME_API_KEY
    base_url: https://llm.acme.test/v1
  local:
    display_name: Local
    kind: offline
models:
  - { id: acme-s, provider: acme, tier: small, context_window: 8000, max_output_tokens: 1000, supports_tools: false, supports_streaming: true }
  - { id: acme-l, provider: acme, tier: large, context_window: 64000, max_output_tokens: 4000, supports_tools: true, supports_streaming: false, enabled: false }
  - { id: local-s, provider: local, tier: small, context_window: 4000, max_output_tokens: 500, supports_tools: true, supports_streaming: true }
pricing:
  acme-s: { prompt_per_1k: 0.5, completion_per_1k: 1.5 }
  acme-l: { prompt_per_1k: 2, completion_per_1k: 6 }
defaults: { complexity_model_id: acme-s, decomposition_model_id: local-s }
`,
    );
    custom = await startService({ MODELS_CONFIG_PATH: path, ACME_API_KEY: "acme-key" });
  });
  afterAll(async () => custom?.stop());

  it("serves the given file, reading the key variable it names", async () => {
    const { status, body } = await getModels(custom.url);
    expect(status).toBe(200);
    expect(body).toEqual({
      acme: [
        {
          id: "acme-s",
          name: "acme-s",
          tier: "small",
          context_window: 8000,
          cost_per_1k_prompt_tokens: 0.5,
          cost_per_1k_completion_tokens: 1.5,
          supports_tools: false,
          supports_streaming: true,
          available: true,
        },
        {
          id: "acme-l",
          name: "acme-l",
          tier: "large",
          context_window: 64000,
          cost_per_1k_prompt_tokens: 2,
          cost_per_1k_completion_tokens: 6,
          supports_tools: true,
          supports_streaming: false,
          available: false,
        },
      ],
      local: [
        {
          id: "local-s",
          name: "local-s",
          tier: "small",
          context_window: 4000,
          cost_per_1k_prompt_tokens: 0,
          cost_per_1k_completion_tokens: 0,
          supports_tools: true,
          supports_streaming: true,
          available: true,
        },
      ],
    });
  });
});

describe("start-up failures", () => {
  it("an unknown COMPLEXITY_MODEL_ID stops start-up with exit 1, naming the id and the valid ones", async () => {
    const { code, output } = await failedStart({ COMPLEXITY_MODEL_ID: "gpt-unknown-xyz" });
    expect(code).toBe(1);
    expect(output).toContain('COMPLEXITY_MODEL_ID: unknown model id \\"gpt-unknown-xyz\\"');
    expect(output).toContain("valid ids: gpt-5-nano,");
    expect(output).not.toMatch(/\n\s+at /); // no stack trace
  });

  it("an unknown DECOMPOSITION_MODEL_ID or a bad DEFAULT_MODEL_TIER stops start-up", async () => {
    const [decomposition, tier] = await Promise.all([
      failedStart({ DECOMPOSITION_MODEL_ID: "nope-model" }),
      failedStart({ DEFAULT_MODEL_TIER: "huge" }),
    ]);
    expect(decomposition.code).toBe(1);
    expect(decomposition.output).toContain("nope-model");
    expect(tier.code).toBe(1);
    expect(tier.output).toContain("DEFAULT_MODEL_TIER");
  });

  it("an invalid catalog file stops start-up, naming the file and the problem", async () => {
    const dir = mkdtempSync(join(tmpdir(), "model-catalog-bad-"));
    const bad = join(dir, "bad.yaml");
    writeFileSync(bad, "providers: [unclosed\n");
    const missingPrice = join(dir, "unpriced.yaml");
    writeFileSync(
      missingPrice,
      `providers: { p: { display_name: P, kind: openai, api_key_env: P_KEY, base_url: "https://p.test" } }
models: [{ id: m, provider: p, tier: small, context_window: 1, max_output_tokens: 1, supports_tools: true, supports_streaming: true }]
defaults: { complexity_model_id: m, decomposition_model_id: m }
`,
    );
    const [syntax, unpriced] = await Promise.all([
      failedStart({ MODELS_CONFIG_PATH: bad }),
      failedStart({ MODELS_CONFIG_PATH: missingPrice }),
    ]);
    expect(syntax.code).toBe(1);
    expect(syntax.output).toContain(`Invalid model catalog ${bad}: YAML syntax`);
    expect(unpriced.code).toBe(1);
    expect(unpriced.output).toContain("pricing.m: missing");
  });
});
