import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

// Local HTTP servers that answer like the real provider APIs, byte for byte, and record what
// they were asked. Frames are written in small pieces (splitting lines, JSON and multi-byte
// characters) the way a real network delivers them.

export interface RecordedRequest {
  method: string;
  path: string;
  headers: IncomingMessage["headers"];
  body: Record<string, unknown>;
}

export type Reply =
  | { kind: "json"; status: number; body: unknown; headers?: Record<string, string> }
  | { kind: "sse"; frames: string[]; pieceBytes?: number; delayMs?: number; hang?: boolean }
  | { kind: "hang" };

export interface WireServer {
  url: string;
  requests: RecordedRequest[];
  /** Resolves when the server sees a client close a connection before the reply ended. */
  clientClosed(): Promise<number>;
  close(): Promise<void>;
}

/** `reply` picks the answer from the request (e.g. by model and attempt). */
export async function startWireServer(reply: (req: RecordedRequest, nth: number) => Reply): Promise<WireServer> {
  const requests: RecordedRequest[] = [];
  let closedWaiters: Array<(at: number) => void> = [];
  const closedAt: number[] = [];
  const server = createServer(async (req: IncomingMessage, res: ServerResponse) => {
    const chunks: Buffer[] = [];
    for await (const c of req) chunks.push(c as Buffer);
    const text = Buffer.concat(chunks).toString("utf8");
    const recorded: RecordedRequest = {
      method: req.method ?? "",
      path: req.url ?? "",
      headers: req.headers,
      body: text === "" ? {} : (JSON.parse(text) as Record<string, unknown>),
    };
    requests.push(recorded);
    const r = reply(recorded, requests.length);
    res.on("close", () => {
      if (res.writableFinished) return;
      const at = Date.now();
      closedAt.push(at);
      for (const w of closedWaiters) w(at);
      closedWaiters = [];
    });
    if (r.kind === "json") {
      res.writeHead(r.status, { "content-type": "application/json", ...r.headers });
      res.end(JSON.stringify(r.body));
      return;
    }
    if (r.kind === "hang") return;
    res.writeHead(200, { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" });
    const bytes = Buffer.from(r.frames.join(""), "utf8");
    const piece = r.pieceBytes ?? 7;
    if (r.delayMs === undefined) {
      for (let i = 0; i < bytes.length; i += piece) res.write(bytes.subarray(i, i + piece));
      if (r.hang) return;
      res.end();
      return;
    }
    // Paced: one frame per delay, so a client can act between frames.
    for (const frame of r.frames) {
      if (res.destroyed) return;
      res.write(frame);
      await new Promise((resolve) => setTimeout(resolve, r.delayMs));
    }
    if (!r.hang && !res.destroyed) res.end();
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    clientClosed: () => {
      const first = closedAt[0];
      if (first !== undefined) return Promise.resolve(first);
      return new Promise((resolve) => closedWaiters.push(resolve));
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// ---- OpenAI Chat Completions stream (stream_options.include_usage: true) ----

const OPENAI_HEAD = {
  id: "chatcmpl-AbC123",
  object: "chat.completion.chunk",
  created: 1730000000,
  model: "gpt-4o-mini-2024-07-18",
  service_tier: "default",
  system_fingerprint: "fp_0ba0d124f1",
};

export function openAiDelta(delta: Record<string, unknown>, finishReason: string | null = null): string {
  return `data: ${JSON.stringify({ ...OPENAI_HEAD, choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }], usage: null })}\n\n`;
}

export function openAiUsage(prompt: number, completion: number): string {
  return `data: ${JSON.stringify({
    ...OPENAI_HEAD,
    choices: [],
    usage: {
      prompt_tokens: prompt,
      completion_tokens: completion,
      total_tokens: prompt + completion,
      prompt_tokens_details: { cached_tokens: 0, audio_tokens: 0 },
      completion_tokens_details: {
        reasoning_tokens: 0,
        audio_tokens: 0,
        accepted_prediction_tokens: 0,
        rejected_prediction_tokens: 0,
      },
    },
  })}\n\n`;
}

export const OPENAI_DONE = "data: [DONE]\n\n";

/** A complete text answer: role chunk, one content chunk per piece, stop, usage, [DONE]. */
export function openAiTextStream(pieces: string[], usage: [number, number] = [11, 7]): string[] {
  return [
    openAiDelta({ role: "assistant", content: "", refusal: null }),
    ...pieces.map((p) => openAiDelta({ content: p })),
    openAiDelta({}, "stop"),
    openAiUsage(usage[0], usage[1]),
    OPENAI_DONE,
  ];
}

// ---- Anthropic Messages stream ----

export function anthropicEvent(type: string, data: Record<string, unknown>): string {
  return `event: ${type}\ndata: ${JSON.stringify({ type, ...data })}\n\n`;
}

export function anthropicStart(inputTokens: number): string {
  return anthropicEvent("message_start", {
    message: {
      id: "msg_01XFDUDYJgAACzvnptvVoYEL",
      type: "message",
      role: "assistant",
      content: [],
      model: "claude-haiku-4-5-20251001",
      stop_reason: null,
      stop_sequence: null,
      usage: {
        input_tokens: inputTokens,
        cache_creation_input_tokens: 0,
        cache_read_input_tokens: 0,
        output_tokens: 1,
        service_tier: "standard",
      },
    },
  });
}

export const ANTHROPIC_PING = 'event: ping\ndata: {"type": "ping"}\n\n';

export function anthropicTextStream(pieces: string[], usage: [number, number] = [25, 12]): string[] {
  return [
    anthropicStart(usage[0]),
    anthropicEvent("content_block_start", { index: 0, content_block: { type: "text", text: "" } }),
    ANTHROPIC_PING,
    ...pieces.map((text) => anthropicEvent("content_block_delta", { index: 0, delta: { type: "text_delta", text } })),
    anthropicEvent("content_block_stop", { index: 0 }),
    anthropicEvent("message_delta", {
      delta: { stop_reason: "end_turn", stop_sequence: null },
      usage: { output_tokens: usage[1] },
    }),
    anthropicEvent("message_stop", {}),
  ];
}
