import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { parseCatalog, type Catalog } from "@tog/catalog";
import { createLlmRouter, type LlmRouter } from "@tog/providers";
import { logger } from "./setup.ts";

// A local OpenAI-compatible upstream that misbehaves on purpose, behind the real router (retry,
// fallback to the offline model). `flaky-1` (small) answers 503 to everything. `picky-1`
// (medium) answers 400 when the last user message mentions FAIL, a three-subtask JSON plan to a
// decomposition request, and "ok" otherwise.

export interface FakeUpstream {
  catalog: Catalog;
  /** Router over the catalog: 1 retry per model, 1 ms backoff, offline fallback on. */
  router(): LlmRouter;
  /** Requests received so far. */
  requests(): number;
  close(): Promise<void>;
}

export const FAKE_PLAN = {
  subtasks: [
    { id: "a", description: "Say hello" },
    { id: "b", description: "FAIL on purpose" },
    { id: "c", description: "Wrap up", dependencies: ["a", "b"] },
  ],
};

function sse(text: string): string {
  const head = { id: "c", object: "chat.completion.chunk", created: 0, model: "m" };
  const chunk = (delta: object, finish: string | null) =>
    `data: ${JSON.stringify({ ...head, choices: [{ index: 0, delta, finish_reason: finish }] })}\n\n`;
  const usage = `data: ${JSON.stringify({ ...head, choices: [], usage: { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 } })}\n\n`;
  return chunk({ role: "assistant", content: text }, null) + chunk({}, "stop") + usage + "data: [DONE]\n\n";
}

export async function startFakeUpstream(): Promise<FakeUpstream> {
  let requests = 0;
  const server = createServer(async (req, res) => {
    requests++;
    let body = "";
    for await (const c of req) body += String(c);
    const request = JSON.parse(body) as { model: string; messages: Array<{ role: string; content: string }> };
    const fail = (status: number, message: string) => {
      res.writeHead(status, { "content-type": "application/json" });
      res.end(JSON.stringify({ error: { message, type: "server_error" } }));
    };
    if (request.model === "flaky-1") return fail(503, "overloaded");
    const lastUser = request.messages.filter((m) => m.role === "user").at(-1)?.content ?? "";
    if (lastUser.includes("FAIL")) return fail(400, "refused");
    const system = request.messages.find((m) => m.role === "system")?.content ?? "";
    res.writeHead(200, { "content-type": "text/event-stream" });
    res.end(sse(system.startsWith("#decompose") ? JSON.stringify(FAKE_PLAN) : "ok"));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  const catalog = parseCatalog(
    `
providers:
  openai: { display_name: Fake, kind: openai, api_key_env: OPENAI_API_KEY, base_url: "${url}" }
  offline: { display_name: Offline, kind: offline }
models:
  - { id: flaky-1, provider: openai, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
  - { id: picky-1, provider: openai, tier: medium, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
  - { id: offline-small, provider: offline, tier: small, context_window: 1000, max_output_tokens: 100, supports_tools: true, supports_streaming: true }
pricing:
  flaky-1: { prompt_per_1k: 0.001, completion_per_1k: 0.002 }
  picky-1: { prompt_per_1k: 0.001, completion_per_1k: 0.002 }
defaults: { default_tier: small, complexity_model_id: flaky-1, decomposition_model_id: flaky-1 }
`,
    "fake-upstream",
  );
  return {
    catalog,
    router: () =>
      createLlmRouter({
        catalog,
        apiKeys: { OPENAI_API_KEY: "sk-test" },
        logger,
        offlineFallback: true,
        retry: { maxRetries: 1, baseDelayMs: 1, maxDelayMs: 2 },
        random: () => 1,
      }),
    requests: () => requests,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
