import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { loadCatalog, parseCatalog, type Catalog } from "@tog/catalog";
import { ValidationError, createLogger, loadConfig } from "@tog/core";
import {
  LlmError,
  createLlmRouter,
  isAbortError,
  llmRouterConfigShape,
  llmRouterSettings,
  type LlmRouterOptions,
  type RetryNotice,
  type StreamDelta,
} from "@tog/providers";
import {
  anthropicTextStream,
  openAiDelta,
  openAiTextStream,
  startWireServer,
  type RecordedRequest,
  type Reply,
  type WireServer,
} from "./wire.ts";

const logger = createLogger({ service: "providers-test", level: "silent" });
const KEYS = { OPENAI_API_KEY: "sk-o", ANTHROPIC_API_KEY: "sk-a" };
const FAST = { maxRetries: 2, baseDelayMs: 1, maxDelayMs: 5 };
const ask = { messages: [{ role: "user" as const, content: "hello" }] };

// Per model, the replies the fake provider gives to successive calls (the last one repeats).
let script: Record<string, Reply[]> = {};
let openai: WireServer;
let anthropic: WireServer;
let catalog: Catalog;

function scripted(req: RecordedRequest): Reply {
  const model = String(req.body.model);
  const queue = script[model] ?? [];
  const next = queue.length > 1 ? queue.shift() : queue[0];
  if (!next) throw new Error(`no script for ${model}`);
  return next;
}

const json = (status: number, message: string): Reply => ({
  kind: "json",
  status,
  body: { error: { message, type: "server_error" } },
});
const ok = (pieces: string[], usage: [number, number]): Reply => ({
  kind: "sse",
  frames: openAiTextStream(pieces, usage),
});
const calls = (server: WireServer, model: string) => server.requests.filter((r) => r.body.model === model).length;

beforeAll(async () => {
  openai = await startWireServer(scripted);
  anthropic = await startWireServer(scripted);
  catalog = parseCatalog(
    `
providers:
  openai: { display_name: OpenAI, kind: openai, api_key_env: OPENAI_API_KEY, base_url: "${openai.url}/v1" }
  anthropic: { display_name: Anthropic, kind: anthropic, api_key_env: ANTHROPIC_API_KEY, base_url: "${anthropic.url}/v1" }
  offline: { display_name: Offline, kind: offline }
models:
  - { id: o-1, provider: openai, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
  - { id: o-old, provider: openai, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true, enabled: false }
  - { id: o-notools, provider: openai, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: false, supports_streaming: true }
  - { id: a-1, provider: anthropic, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
  - { id: o-big, provider: openai, tier: large, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
  - { id: offline-small, provider: offline, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
  - { id: offline-large, provider: offline, tier: large, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
pricing:
  o-1: { prompt_per_1k: 0.0001, completion_per_1k: 0.0004 }
  o-old: { prompt_per_1k: 1, completion_per_1k: 1 }
  o-notools: { prompt_per_1k: 0.0002, completion_per_1k: 0.0008 }
  a-1: { prompt_per_1k: 0.003, completion_per_1k: 0.015 }
  o-big: { prompt_per_1k: 0.002, completion_per_1k: 0.008 }
defaults: { default_tier: small, complexity_model_id: o-1, decomposition_model_id: o-1 }
`,
    "router-test",
  );
});
afterAll(async () => {
  await openai.close();
  await anthropic.close();
});
beforeEach(() => {
  script = {};
  openai.requests.length = 0;
  anthropic.requests.length = 0;
});

const router = (extra: Partial<LlmRouterOptions> = {}) =>
  createLlmRouter({ catalog, apiKeys: KEYS, logger, retry: FAST, ...extra });

describe("LLM router: selection", () => {
  it("runs every tier on the offline provider when no provider key is configured", async () => {
    const r = router({ apiKeys: { OPENAI_API_KEY: "  ", ANTHROPIC_API_KEY: undefined } });
    expect(r.offlineOnly).toBe(true);
    expect(r.candidates({ tier: "small" }).map((m) => m.id)).toEqual(["offline-small"]);
    expect(r.candidates({ tier: "large" }).map((m) => m.id)).toEqual(["offline-large"]);
    const c = await r.complete({ tier: "small", request: ask });
    expect(c).toMatchObject({ model: "offline-small", provider: "offline", tier: "small", costUsd: 0, retryCount: 0 });
    expect(c.text).toContain("Offline answer");
    expect(openai.requests).toHaveLength(0);
  });

  it("the shipped catalog with no keys: offline-small|medium|large, cost 0", async () => {
    const r = createLlmRouter({ catalog: loadCatalog(), apiKeys: {}, logger });
    for (const tier of ["small", "medium", "large"] as const) {
      const c = await r.complete({ tier, request: ask });
      expect(c).toMatchObject({ model: `offline-${tier}`, provider: "offline", costUsd: 0 });
    }
  });

  it("with keys: the tier's enabled models of configured providers in catalog order, offline only on request", () => {
    expect(router().offlineOnly).toBe(false);
    expect(
      router()
        .candidates({ tier: "small" })
        .map((m) => m.id),
    ).toEqual(["o-1", "o-notools", "a-1"]);
    expect(
      router()
        .candidates({ tier: "small", tools: true })
        .map((m) => m.id),
    ).toEqual(["o-1", "a-1"]);
    expect(
      router({ apiKeys: { ANTHROPIC_API_KEY: "k" } })
        .candidates({ tier: "small" })
        .map((m) => m.id),
    ).toEqual(["a-1"]);
    expect(
      router({ offlineFallback: true })
        .candidates({ tier: "small" })
        .map((m) => m.id),
    ).toEqual(["o-1", "o-notools", "a-1", "offline-small"]);
    expect(
      router()
        .candidates({ tier: "small", providerOverride: "anthropic" })
        .map((m) => m.id),
    ).toEqual(["a-1"]);
    expect(
      router()
        .candidates({ tier: "small", providerOverride: "offline" })
        .map((m) => m.id),
    ).toEqual(["offline-small"]);
    expect(
      router()
        .candidates({ tier: "small", modelOverride: "o-big" })
        .map((m) => m.id),
    ).toEqual(["o-big"]);
  });

  it("refuses unusable overrides and tiers with ValidationError", () => {
    const r = router({ apiKeys: { OPENAI_API_KEY: "k" } });
    const refuse = (fn: () => unknown, message: string) => {
      expect(fn).toThrow(ValidationError);
      expect(fn).toThrow(message);
    };
    refuse(() => r.candidates({ tier: "small", modelOverride: "nope" }), "Unknown model: nope");
    refuse(() => r.candidates({ tier: "small", modelOverride: "o-old" }), "Model o-old is disabled");
    refuse(
      () => r.candidates({ tier: "small", modelOverride: "a-1" }),
      "Model a-1 is unavailable: provider anthropic has no API key configured",
    );
    refuse(
      () => r.candidates({ tier: "small", providerOverride: "anthropic" }),
      "Provider anthropic is unavailable: no API key configured",
    );
    refuse(() => r.candidates({ tier: "small", providerOverride: "mistral" }), "Unknown provider: mistral");
    refuse(() => r.candidates({ tier: "huge" as "small" }), "Invalid model tier: huge (allowed: small, medium, large)");
  });
});

describe("LLM router: resilience", () => {
  it("retries a 429 on the same model, then succeeds; reports the retry", async () => {
    script["o-1"] = [
      { ...json(429, "Rate limit reached"), headers: { "retry-after": "0" } } as Reply,
      ok(["Hi", " there"], [1000, 2000]),
    ];
    const notices: RetryNotice[] = [];
    const c = await router().complete({ tier: "small", request: ask, onRetry: (n) => notices.push(n) });
    expect(c).toMatchObject({ text: "Hi there", model: "o-1", provider: "openai", retryCount: 1 });
    expect(calls(openai, "o-1")).toBe(2);
    expect(notices).toHaveLength(1);
    expect(notices[0]).toMatchObject({
      attempt: 1,
      action: "retry",
      model: "o-1",
      nextModel: "o-1",
      nextProvider: "openai",
    });
    expect(notices[0]?.error.message).toBe("openai o-1: HTTP 429: Rate limit reached");
    expect(notices[0]?.delayMs).toBeGreaterThanOrEqual(0);
    expect(notices[0]?.delayMs).toBeLessThanOrEqual(FAST.maxDelayMs);
  });

  it("500 three times (1 call + 2 retries) falls back to the next model of the tier", async () => {
    script["o-1"] = [json(500, "The server had an error")];
    script["o-notools"] = [ok(["from the fallback"], [10, 3])];
    const notices: RetryNotice[] = [];
    const c = await router().complete({ tier: "small", request: ask, onRetry: (n) => notices.push(n) });
    expect(c).toMatchObject({ text: "from the fallback", model: "o-notools", retryCount: 3 });
    expect(calls(openai, "o-1")).toBe(3);
    expect(calls(openai, "o-notools")).toBe(1);
    expect(notices.map((n) => [n.attempt, n.action, n.model, n.nextModel])).toEqual([
      [1, "retry", "o-1", "o-1"],
      [2, "retry", "o-1", "o-1"],
      [3, "fallback", "o-1", "o-notools"],
    ]);
    expect(notices[2]?.delayMs).toBe(0);
  });

  it("falls back across providers (OpenAI-compatible → Anthropic)", async () => {
    script["o-1"] = [json(503, "down")];
    script["o-notools"] = [json(503, "down")];
    script["a-1"] = [{ kind: "sse", frames: anthropicTextStream(["claude here"], [100, 20]) }];
    const c = await router().complete({ tier: "small", request: ask });
    expect(c).toMatchObject({ text: "claude here", model: "a-1", provider: "anthropic", retryCount: 6 });
    expect(c.costUsd).toBe(0.0006); // 100 × 0.003/1K + 20 × 0.015/1K
  });

  it("a non-retryable failure (400/401) is not repeated but falls back at once", async () => {
    script["o-1"] = [json(401, "Incorrect API key provided")];
    script["o-notools"] = [ok(["ok"], [1, 1])];
    const c = await router().complete({ tier: "small", request: ask });
    expect(c.model).toBe("o-notools");
    expect(calls(openai, "o-1")).toBe(1);
    expect(c.retryCount).toBe(1);
  });

  it("final failure: LlmError (LLM_ERROR) with retry count, recoverable for provider outages", async () => {
    script["o-1"] = [json(503, "overloaded")];
    script["o-notools"] = [json(502, "bad gateway")];
    script["a-1"] = [
      {
        kind: "json",
        status: 529,
        body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
      },
    ];
    const err = await router()
      .complete({ tier: "small", request: ask })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(LlmError);
    const e = err as LlmError;
    expect(e).toMatchObject({
      name: "LlmError",
      errorType: "LLM_ERROR",
      code: "UPSTREAM_UNAVAILABLE",
      recoverable: true,
      retryCount: 8,
      maxRetries: 2,
    });
    expect(e.message).toBe("LLM call failed for tier small after 9 attempts: anthropic a-1: HTTP 529: Overloaded");
    expect(e.attempts.map((a) => [a.model, a.status])).toEqual([
      ["o-1", 503],
      ["o-1", 503],
      ["o-1", 503],
      ["o-notools", 502],
      ["o-notools", 502],
      ["o-notools", 502],
      ["a-1", 529],
      ["a-1", 529],
      ["a-1", 529],
    ]);
  });

  it("final failure from refused requests is not recoverable (code INTERNAL)", async () => {
    script["o-1"] = [json(400, "Invalid parameter")];
    script["o-notools"] = [json(400, "Invalid parameter")];
    script["a-1"] = [
      { kind: "json", status: 400, body: { type: "error", error: { type: "invalid_request_error", message: "bad" } } },
    ];
    const err = (await router()
      .complete({ tier: "small", request: ask })
      .catch((e: unknown) => e)) as LlmError;
    expect(err).toBeInstanceOf(LlmError);
    expect(err).toMatchObject({ code: "INTERNAL", recoverable: false, retryCount: 2 });
  });

  it("a pinned model is retried but never replaced", async () => {
    script["o-1"] = [json(500, "boom")];
    const err = (await router()
      .complete({ tier: "small", modelOverride: "o-1", request: ask })
      .catch((e: unknown) => e)) as LlmError;
    expect(err).toBeInstanceOf(LlmError);
    expect(err.message).toBe("LLM call failed for model o-1 after 3 attempts: openai o-1: HTTP 500: boom");
    expect(err.retryCount).toBe(2);
    expect(openai.requests).toHaveLength(3);
  });

  it("a request with tools skips models without tool support", async () => {
    script["o-1"] = [json(500, "boom")];
    script["a-1"] = [{ kind: "sse", frames: anthropicTextStream(["tools ok"]) }];
    const tools = [{ name: "calculator", description: "math", parameters: { type: "object" } }];
    const c = await router().complete({ tier: "small", request: { ...ask, tools } });
    expect(c.model).toBe("a-1");
    expect(calls(openai, "o-notools")).toBe(0);
  });

  it("keeps chunk indexes increasing across a retry after a mid-stream failure", async () => {
    script["o-1"] = [
      { kind: "sse", frames: [openAiDelta({ content: "par" }), openAiDelta({ content: "tial" })] },
      ok(["full", " answer"], [5, 2]),
    ];
    const deltas: StreamDelta[] = [];
    const c = await router().complete({ tier: "small", request: ask, onDelta: (d) => deltas.push(d) });
    expect(c.text).toBe("full answer");
    expect(deltas.map((d) => [d.index, d.text])).toEqual([
      [0, "par"],
      [1, "tial"],
      [2, "full"],
      [3, " answer"],
    ]);
  });

  it("abort mid-stream is not retried: rejects with AbortError and closes the provider connection", async () => {
    script["o-1"] = [
      { kind: "sse", frames: [openAiDelta({ content: "a" }), openAiDelta({ content: "b" })], delayMs: 30, hang: true },
    ];
    const controller = new AbortController();
    const notices: RetryNotice[] = [];
    const err = await router()
      .complete({
        tier: "small",
        request: ask,
        signal: controller.signal,
        onDelta: () => controller.abort(),
        onRetry: (n) => notices.push(n),
      })
      .catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    expect(notices).toEqual([]);
    expect(openai.requests).toHaveLength(1);
    await openai.clientClosed();
  });

  it("abort during a backoff wait rejects promptly", async () => {
    script["o-1"] = [json(503, "down")];
    const controller = new AbortController();
    const r = router({ retry: { maxRetries: 2, baseDelayMs: 10_000, maxDelayMs: 10_000 } });
    const started = Date.now();
    const pending = r.complete({
      tier: "small",
      request: ask,
      signal: controller.signal,
      onRetry: () => setTimeout(() => controller.abort(), 20),
    });
    const err = await pending.catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    expect(Date.now() - started).toBeLessThan(1_000);
  });

  it("backoff grows exponentially with jitter and honours Retry-After up to the cap", async () => {
    script["o-1"] = [json(500, "x")];
    script["o-notools"] = [{ ...json(429, "slow down"), headers: { "retry-after": "60" } } as Reply];
    script["a-1"] = [{ kind: "sse", frames: anthropicTextStream(["ok"]) }];
    const notices: RetryNotice[] = [];
    await router({ retry: { maxRetries: 2, baseDelayMs: 8, maxDelayMs: 40 }, random: () => 1 }).complete({
      tier: "small",
      request: ask,
      onRetry: (n) => notices.push(n),
    });
    expect(notices.map((n) => [n.model, n.action, n.delayMs])).toEqual([
      ["o-1", "retry", 8],
      ["o-1", "retry", 16],
      ["o-1", "fallback", 0],
      ["o-notools", "retry", 40],
      ["o-notools", "retry", 40],
      ["o-notools", "fallback", 0],
    ]);
  });
});

describe("LLM router: cost", () => {
  it("cost equals the catalog's central prices (shipped catalog, gpt-5-nano, claude-haiku-4-5)", async () => {
    const shipped = loadCatalog();
    // The shipped catalog points at the real APIs; the fetch seam sends those calls to the local wire servers.
    const redirect: typeof fetch = (input, init) =>
      fetch(
        String(input).replace("https://api.openai.com", openai.url).replace("https://api.anthropic.com", anthropic.url),
        init,
      );
    script["gpt-5-nano"] = [ok(["nano"], [12_000, 3_000])];
    script["claude-haiku-4-5"] = [{ kind: "sse", frames: anthropicTextStream(["haiku"], [2_000, 500]) }];
    const r = createLlmRouter({ catalog: shipped, apiKeys: KEYS, logger, fetch: redirect });
    const nano = await r.complete({ tier: "small", modelOverride: "gpt-5-nano", request: ask });
    // $0.05 / $0.40 per 1M → 12K × 0.00005/1K + 3K × 0.0004/1K
    expect(nano.costUsd).toBe(0.0018);
    expect(nano.costUsd).toBe(shipped.costOf("gpt-5-nano", { promptTokens: 12_000, completionTokens: 3_000 }));
    const haiku = await r.complete({ tier: "small", modelOverride: "claude-haiku-4-5", request: ask });
    // $1 / $5 per 1M → 2K × 0.001/1K + 500 × 0.005/1K
    expect(haiku.costUsd).toBe(0.0045);
    expect(anthropic.requests.at(-1)?.path).toBe("/v1/messages");
  });

  it("o-1 usage 1000/2000 costs 0.0009 USD", async () => {
    script["o-1"] = [ok(["x"], [1000, 2000])];
    const c = await router().complete({ tier: "small", request: ask });
    expect(c.usage).toEqual({ inputTokens: 1000, outputTokens: 2000, totalTokens: 3000 });
    expect(c.costUsd).toBe(0.0009);
  });
});

describe("LLM router: config", () => {
  it("llmRouterConfigShape defaults and overrides map onto router options", () => {
    expect(llmRouterSettings(loadConfig(llmRouterConfigShape, {}))).toEqual({
      retry: { maxRetries: 2, baseDelayMs: 250, maxDelayMs: 4000 },
      idleTimeoutMs: 60_000,
      offlineFallback: false,
      offline: { chunkDelayMs: 0 },
    });
    const custom = llmRouterSettings(
      loadConfig(llmRouterConfigShape, {
        LLM_MAX_RETRIES: "0",
        LLM_OFFLINE_FALLBACK: "1",
        OFFLINE_CHUNK_DELAY_MS: "15",
      }),
    );
    expect(custom).toMatchObject({ retry: { maxRetries: 0 }, offlineFallback: true, offline: { chunkDelayMs: 15 } });
    expect(() => loadConfig(llmRouterConfigShape, { LLM_MAX_RETRIES: "-1" })).toThrow("LLM_MAX_RETRIES");
  });
});
