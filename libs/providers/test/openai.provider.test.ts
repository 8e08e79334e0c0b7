import { afterEach, describe, expect, it } from "vitest";
import { ProviderError, createOpenAiProvider, isAbortError, type StreamDelta } from "@tog/providers";
import {
  OPENAI_DONE,
  openAiDelta,
  openAiTextStream,
  openAiUsage,
  startWireServer,
  type Reply,
  type WireServer,
} from "./wire.ts";

let server: WireServer | undefined;
afterEach(async () => {
  await server?.close();
  server = undefined;
});

async function serve(reply: Reply | ((n: number) => Reply)) {
  server = await startWireServer((_req, n) => (typeof reply === "function" ? reply(n) : reply));
  return server;
}

const provider = (url: string, extra: { idleTimeoutMs?: number } = {}) =>
  createOpenAiProvider({ name: "openai", baseUrl: `${url}/v1`, apiKey: "sk-test-123", ...extra });

describe("OpenAI-compatible provider", () => {
  it("streams text deltas in order, split across TCP pieces, and reports the usage chunk", async () => {
    const s = await serve({
      kind: "sse",
      frames: openAiTextStream(["Hel", "lo, ", "wörld", " 👋"], [13, 5]),
      pieceBytes: 5,
    });
    const deltas: StreamDelta[] = [];
    const c = await provider(s.url).stream(
      {
        model: "gpt-4o-mini",
        messages: [
          { role: "system", content: "Be brief." },
          { role: "user", content: "Say hello" },
        ],
        max_tokens: 50,
        temperature: 0.2,
      },
      { onDelta: (d) => deltas.push(d) },
    );
    expect(deltas.map((d) => d.text)).toEqual(["Hel", "lo, ", "wörld", " 👋"]);
    expect(deltas.map((d) => d.index)).toEqual([0, 1, 2, 3]);
    // Estimate: ceil(chars so far / 4), never decreasing.
    expect(deltas.map((d) => d.totalTokensSoFar)).toEqual([1, 2, 3, 4]);
    expect(c).toEqual({
      text: "Hello, wörld 👋",
      toolCalls: [],
      usage: { inputTokens: 13, outputTokens: 5, totalTokens: 18 },
      model: "gpt-4o-mini",
      provider: "openai",
      finishReason: "stop",
    });

    const req = s.requests[0];
    expect(req?.method).toBe("POST");
    expect(req?.path).toBe("/v1/chat/completions");
    expect(req?.headers.authorization).toBe("Bearer sk-test-123");
    expect(req?.headers.accept).toBe("text/event-stream");
    expect(req?.body).toEqual({
      model: "gpt-4o-mini",
      messages: [
        { role: "system", content: "Be brief." },
        { role: "user", content: "Say hello" },
      ],
      stream: true,
      stream_options: { include_usage: true },
      max_tokens: 50,
      temperature: 0.2,
    });
  });

  it("assembles tool calls from fragments split across chunks and sends tools/tool turns in OpenAI's shape", async () => {
    const s = await serve({
      kind: "sse",
      frames: [
        openAiDelta({ role: "assistant", content: null }),
        openAiDelta({
          tool_calls: [{ index: 0, id: "call_abc", type: "function", function: { name: "calculator", arguments: "" } }],
        }),
        openAiDelta({ tool_calls: [{ index: 0, function: { arguments: '{"expre' } }] }),
        openAiDelta({ tool_calls: [{ index: 0, function: { arguments: 'ssion":"12*(3' } }] }),
        openAiDelta({
          tool_calls: [{ index: 1, id: "call_def", type: "function", function: { name: "datetime", arguments: "" } }],
        }),
        openAiDelta({ tool_calls: [{ index: 0, function: { arguments: '+4)"}' } }] }),
        openAiDelta({ tool_calls: [{ index: 1, function: { arguments: '{"operation":"now"}' } }] }),
        openAiDelta({}, "tool_calls"),
        openAiUsage(82, 40),
        OPENAI_DONE,
      ],
    });
    const tools = [
      {
        name: "calculator",
        description: "Evaluates arithmetic",
        parameters: { type: "object", properties: { expression: { type: "string" } }, required: ["expression"] },
      },
    ];
    const c = await provider(s.url).stream({
      model: "gpt-4o-mini",
      messages: [
        { role: "user", content: "what is 2+2 and 12*(3+4)?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "call_1", name: "calculator", arguments: { expression: "2+2" } }],
        },
        { role: "tool", tool_call_id: "call_1", content: "4" },
      ],
      tools,
    });
    expect(c.toolCalls).toEqual([
      { id: "call_abc", name: "calculator", arguments: { expression: "12*(3+4)" } },
      { id: "call_def", name: "datetime", arguments: { operation: "now" } },
    ]);
    expect(c.finishReason).toBe("tool_calls");
    expect(c.text).toBe("");
    expect(c.usage).toEqual({ inputTokens: 82, outputTokens: 40, totalTokens: 122 });
    const body = s.requests[0]?.body;
    expect(body?.tools).toEqual([{ type: "function", function: tools[0] }]);
    expect(body?.messages).toEqual([
      { role: "user", content: "what is 2+2 and 12*(3+4)?" },
      {
        role: "assistant",
        content: null,
        tool_calls: [
          { id: "call_1", type: "function", function: { name: "calculator", arguments: '{"expression":"2+2"}' } },
        ],
      },
      { role: "tool", tool_call_id: "call_1", content: "4" },
    ]);
  });

  it("estimates usage when the server sends no usage chunk (older local servers)", async () => {
    const s = await serve({
      kind: "sse",
      frames: [openAiDelta({ content: "abcdefgh" }), openAiDelta({}, "stop"), OPENAI_DONE],
    });
    const c = await provider(s.url).stream({ model: "llama3", messages: [{ role: "user", content: "x".repeat(40) }] });
    expect(c.usage).toEqual({ inputTokens: 10, outputTokens: 2, totalTokens: 12 });
  });

  it("uses max_completion_tokens for api.openai.com", async () => {
    const s = await serve({ kind: "sse", frames: openAiTextStream(["ok"]) });
    const redirect: typeof fetch = (input, init) => fetch(String(input).replace("https://api.openai.com", s.url), init);
    const p = createOpenAiProvider({
      name: "openai",
      baseUrl: "https://api.openai.com/v1",
      apiKey: "k",
      fetch: redirect,
    });
    await p.stream({ model: "gpt-5-nano", messages: [{ role: "user", content: "hi" }], max_tokens: 9 });
    expect(s.requests[0]?.body.max_completion_tokens).toBe(9);
    expect(s.requests[0]?.body.max_tokens).toBeUndefined();
  });

  it("turns HTTP errors into ProviderErrors that say whether a retry may help", async () => {
    const s = await serve((n) =>
      n === 1
        ? {
            kind: "json",
            status: 429,
            body: {
              error: { message: "Rate limit reached for gpt-4o-mini", type: "requests", code: "rate_limit_exceeded" },
            },
            headers: { "retry-after": "2" },
          }
        : {
            kind: "json",
            status: 401,
            body: {
              error: { message: "Incorrect API key provided", type: "invalid_request_error", code: "invalid_api_key" },
            },
          },
    );
    const p = provider(s.url);
    const req = { model: "gpt-4o-mini", messages: [{ role: "user" as const, content: "hi" }] };
    const first = await p.stream(req).catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ProviderError);
    expect(first).toMatchObject({
      status: 429,
      retryable: true,
      retryAfterMs: 2000,
      code: "UPSTREAM_UNAVAILABLE",
      message: "openai gpt-4o-mini: HTTP 429: Rate limit reached for gpt-4o-mini",
    });
    const second = await p.stream(req).catch((e: unknown) => e);
    expect(second).toMatchObject({
      status: 401,
      retryable: false,
      code: "INTERNAL",
      message: "openai gpt-4o-mini: HTTP 401: Incorrect API key provided",
    });
  });

  it("fails retryably when the stream ends before finish_reason/[DONE] or carries an error frame", async () => {
    const s = await serve((n) =>
      n === 1
        ? { kind: "sse", frames: [openAiDelta({ content: "partial" })] }
        : {
            kind: "sse",
            frames: [
              openAiDelta({ content: "x" }),
              `data: ${JSON.stringify({ error: { message: "upstream model crashed" } })}\n\n`,
            ],
          },
    );
    const req = { model: "m", messages: [{ role: "user" as const, content: "hi" }] };
    await expect(provider(s.url).stream(req)).rejects.toMatchObject({
      retryable: true,
      message: "openai m: stream ended before the completion finished",
    });
    await expect(provider(s.url).stream(req)).rejects.toMatchObject({
      retryable: true,
      message: "openai m: upstream model crashed",
    });
  });

  it("aborting mid-stream rejects with AbortError at once and closes the connection", async () => {
    const s = await serve({
      kind: "sse",
      frames: [openAiDelta({ content: "first" }), openAiDelta({ content: "second" })],
      delayMs: 30,
      hang: true,
    });
    const controller = new AbortController();
    const texts: string[] = [];
    const started = Date.now();
    const err = await provider(s.url)
      .stream(
        { model: "m", messages: [{ role: "user", content: "long story" }] },
        {
          signal: controller.signal,
          onDelta: (d) => {
            texts.push(d.text);
            if (d.text === "second") controller.abort();
          },
        },
      )
      .catch((e: unknown) => e);
    const rejectedAt = Date.now();
    expect(isAbortError(err)).toBe(true);
    expect(texts).toEqual(["first", "second"]);
    const closedAt = await s.clientClosed();
    expect(rejectedAt - started).toBeLessThan(1_000);
    expect(closedAt - rejectedAt).toBeLessThan(500);
  });

  it("gives up on a silent stream after the idle timeout (retryable)", async () => {
    const s = await serve({ kind: "sse", frames: [openAiDelta({ content: "a" })], hang: true });
    const started = Date.now();
    await expect(
      provider(s.url, { idleTimeoutMs: 150 }).stream({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({
      retryable: true,
      message: "openai m: no data for 150 ms",
    });
    expect(Date.now() - started).toBeLessThan(2_000);
    await s.clientClosed();
  });

  it("reports a refused connection as a retryable network error", async () => {
    const s = await serve({ kind: "hang" });
    const url = s.url;
    await s.close();
    server = undefined;
    await expect(
      provider(url).stream({ model: "m", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({
      retryable: true,
      message: "openai m: network error: ECONNREFUSED",
    });
  });
});
