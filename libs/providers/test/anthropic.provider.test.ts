import { afterEach, describe, expect, it } from "vitest";
import { ProviderError, createAnthropicProvider, isAbortError, type StreamDelta } from "@tog/providers";
import {
  ANTHROPIC_PING,
  anthropicEvent,
  anthropicStart,
  anthropicTextStream,
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

// The catalog's base_url form ends in /v1; the adapter must not double it.
const provider = (url: string) =>
  createAnthropicProvider({ name: "anthropic", baseUrl: `${url}/v1`, apiKey: "sk-ant-test" });

describe("Anthropic Messages provider", () => {
  it("streams text_delta events in order (with ping) and reports usage from message_start + message_delta", async () => {
    const s = await serve({
      kind: "sse",
      frames: anthropicTextStream(["Hello", "! How can ", "I help? ✨"], [25, 12]),
      pieceBytes: 9,
    });
    const deltas: StreamDelta[] = [];
    const c = await provider(s.url).stream(
      {
        model: "claude-haiku-4-5",
        messages: [
          { role: "system", content: "You are terse." },
          { role: "user", content: "Hi" },
        ],
        temperature: 0.5,
      },
      { onDelta: (d) => deltas.push(d) },
    );
    expect(deltas.map((d) => [d.index, d.text])).toEqual([
      [0, "Hello"],
      [1, "! How can "],
      [2, "I help? ✨"],
    ]);
    expect(c).toEqual({
      text: "Hello! How can I help? ✨",
      toolCalls: [],
      usage: { inputTokens: 25, outputTokens: 12, totalTokens: 37 },
      model: "claude-haiku-4-5",
      provider: "anthropic",
      finishReason: "stop",
    });
    const req = s.requests[0];
    expect(req?.path).toBe("/v1/messages");
    expect(req?.headers["x-api-key"]).toBe("sk-ant-test");
    expect(req?.headers["anthropic-version"]).toBe("2023-06-01");
    expect(req?.headers.authorization).toBeUndefined();
    expect(req?.body).toEqual({
      model: "claude-haiku-4-5",
      max_tokens: 4096,
      system: "You are terse.",
      messages: [{ role: "user", content: [{ type: "text", text: "Hi" }] }],
      stream: true,
      temperature: 0.5,
    });
  });

  it("assembles tool_use input from input_json_delta pieces and maps tool turns to tool_use/tool_result blocks", async () => {
    const s = await serve({
      kind: "sse",
      frames: [
        anthropicStart(472),
        anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        anthropicEvent("content_block_delta", {
          index: 0,
          delta: { type: "text_delta", text: "Let me compute that." },
        }),
        anthropicEvent("content_block_stop", { index: 0 }),
        anthropicEvent("content_block_start", {
          index: 1,
          content_block: { type: "tool_use", id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "calculator", input: {} },
        }),
        anthropicEvent("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "" } }),
        anthropicEvent("content_block_delta", {
          index: 1,
          delta: { type: "input_json_delta", partial_json: '{"expr' },
        }),
        ANTHROPIC_PING,
        anthropicEvent("content_block_delta", {
          index: 1,
          delta: { type: "input_json_delta", partial_json: 'ession": "12*(3+4)"' },
        }),
        anthropicEvent("content_block_delta", { index: 1, delta: { type: "input_json_delta", partial_json: "}" } }),
        anthropicEvent("content_block_stop", { index: 1 }),
        anthropicEvent("message_delta", {
          delta: { stop_reason: "tool_use", stop_sequence: null },
          usage: { output_tokens: 89 },
        }),
        anthropicEvent("message_stop", {}),
      ],
    });
    const c = await provider(s.url).stream({
      model: "claude-haiku-4-5",
      max_tokens: 256,
      tools: [
        {
          name: "calculator",
          description: "Evaluates arithmetic",
          parameters: { type: "object", properties: { expression: { type: "string" } } },
        },
      ],
      messages: [
        { role: "system", content: "A" },
        { role: "system", content: "B" },
        { role: "user", content: "what is 2+2, then 12*(3+4)?" },
        {
          role: "assistant",
          content: "",
          tool_calls: [{ id: "toolu_1", name: "calculator", arguments: { expression: "2+2" } }],
        },
        { role: "tool", tool_call_id: "toolu_1", content: "4" },
      ],
    });
    expect(c.text).toBe("Let me compute that.");
    expect(c.toolCalls).toEqual([
      { id: "toolu_01T1x1fJ34qAmk2tNTrN7Up6", name: "calculator", arguments: { expression: "12*(3+4)" } },
    ]);
    expect(c.finishReason).toBe("tool_calls");
    expect(c.usage).toEqual({ inputTokens: 472, outputTokens: 89, totalTokens: 561 });
    const body = s.requests[0]?.body;
    expect(body?.system).toBe("A\n\nB");
    expect(body?.max_tokens).toBe(256);
    expect(body?.tools).toEqual([
      {
        name: "calculator",
        description: "Evaluates arithmetic",
        input_schema: { type: "object", properties: { expression: { type: "string" } } },
      },
    ]);
    expect(body?.messages).toEqual([
      { role: "user", content: [{ type: "text", text: "what is 2+2, then 12*(3+4)?" }] },
      {
        role: "assistant",
        content: [{ type: "tool_use", id: "toolu_1", name: "calculator", input: { expression: "2+2" } }],
      },
      { role: "user", content: [{ type: "tool_result", tool_use_id: "toolu_1", content: "4" }] },
    ]);
  });

  it("an error event mid-stream fails the call; overloaded_error is retryable, invalid_request_error is not", async () => {
    const s = await serve((n) => ({
      kind: "sse",
      frames: [
        anthropicStart(10),
        anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
        anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text: "Hi" } }),
        anthropicEvent("error", {
          error:
            n === 1
              ? { type: "overloaded_error", message: "Overloaded" }
              : { type: "invalid_request_error", message: "bad" },
        }),
      ],
    }));
    const req = { model: "claude-haiku-4-5", messages: [{ role: "user" as const, content: "x" }] };
    const first = await provider(s.url)
      .stream(req)
      .catch((e: unknown) => e);
    expect(first).toBeInstanceOf(ProviderError);
    expect(first).toMatchObject({
      retryable: true,
      message: "anthropic claude-haiku-4-5: overloaded_error: Overloaded",
    });
    await expect(provider(s.url).stream(req)).rejects.toMatchObject({
      retryable: false,
      message: "anthropic claude-haiku-4-5: invalid_request_error: bad",
    });
  });

  it("maps HTTP 529 (overloaded) to a retryable error with the provider's message", async () => {
    const s = await serve({
      kind: "json",
      status: 529,
      body: { type: "error", error: { type: "overloaded_error", message: "Overloaded" } },
    });
    await expect(
      provider(s.url).stream({ model: "claude-haiku-4-5", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({
      status: 529,
      retryable: true,
      message: "anthropic claude-haiku-4-5: HTTP 529: Overloaded",
    });
  });

  it("fails retryably when the stream ends without message_stop", async () => {
    const s = await serve({ kind: "sse", frames: anthropicTextStream(["cut"]).slice(0, 4) });
    await expect(
      provider(s.url).stream({ model: "c", messages: [{ role: "user", content: "x" }] }),
    ).rejects.toMatchObject({
      retryable: true,
      message: "anthropic c: stream ended before message_stop",
    });
  });

  it("aborting mid-stream rejects with AbortError and the server sees the socket close", async () => {
    const frames = anthropicTextStream(["one", "two", "three", "four"]);
    const s = await serve({ kind: "sse", frames, delayMs: 40, hang: true });
    const controller = new AbortController();
    const texts: string[] = [];
    const err = await provider(s.url)
      .stream(
        { model: "c", messages: [{ role: "user", content: "x" }] },
        {
          signal: controller.signal,
          onDelta: (d) => {
            texts.push(d.text);
            controller.abort();
          },
        },
      )
      .catch((e: unknown) => e);
    const rejectedAt = Date.now();
    expect(isAbortError(err)).toBe(true);
    expect(texts).toEqual(["one"]);
    const closedAt = await s.clientClosed();
    expect(closedAt - rejectedAt).toBeLessThan(500);
  });
});
