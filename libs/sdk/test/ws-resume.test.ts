// The SDK's WebSocket stream against a scripted server (a real `ws` server on a free port whose
// behaviour the test chooses): it resubscribes with the last seq after a close, drops
// duplicates, ignores pong, ends at the terminal event, turns the server's refusal close codes
// 4400/4404 into typed errors carrying the close reason, and reconnects after 4429/4503/1011
// (docs/decisions.md "WebSocket server messages"). Against the real system:
// tests-e2e/clients/sdk.test.ts and tests-e2e/stream/ws.test.ts.
import type http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { WebSocketServer, type WebSocket } from "ws";
import { BadRequestError, NotFoundError, TogClient, type ReconnectInfo } from "../src/index.ts";

type Script = (ws: WebSocket, subscribe: Record<string, unknown>) => void;
let server: WebSocketServer | undefined;

async function scripted(
  scripts: Script[],
): Promise<{ url: string; subscribes: Record<string, unknown>[]; handshakes: http.IncomingHttpHeaders[] }> {
  const subscribes: Record<string, unknown>[] = [];
  const handshakes: http.IncomingHttpHeaders[] = [];
  server = new WebSocketServer({ port: 0, host: "127.0.0.1" });
  server.on("connection", (ws, req) => {
    handshakes.push(req.headers);
    const script = scripts[handshakes.length - 1];
    ws.once("message", (data) => {
      const message = JSON.parse(String(data)) as Record<string, unknown>;
      subscribes.push(message);
      if (script) script(ws, message);
      else ws.close(1011, "no script");
    });
  });
  await new Promise((r) => server!.once("listening", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, subscribes, handshakes };
}
afterEach(async () => {
  for (const c of server?.clients ?? []) c.terminate();
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

const event = (seq: number, type = "PROGRESS", data: Record<string, unknown> = {}) =>
  JSON.stringify({
    workflow_id: "w",
    type,
    agent_id: "a",
    message: "",
    timestamp: "2026-01-01T00:00:00Z",
    seq,
    stream_id: `1700000000000-${seq}`,
    data,
  });
const fast = { transport: "ws" as const, backoff: { initialMs: 50, maxMs: 200 } };

describe("WebSocket resume rules", () => {
  it("resubscribes with the last seq after a close, drops duplicates, ignores pong, ends at the terminal event", async () => {
    const s = await scripted([
      (ws) => {
        ws.send(event(1));
        ws.send('{"type":"pong"}');
        ws.send(event(2));
        ws.close(1012, "Service restart: resubscribe with last_event_id");
      },
      (ws) => {
        ws.send(event(2)); // at least once
        ws.send(event(3));
        ws.send(event(4, "WORKFLOW_COMPLETED", { result: "ok" }));
        ws.send(event(5));
      },
    ]);
    const reconnects: ReconnectInfo[] = [];
    const seqs: number[] = [];
    for await (const e of new TogClient({ baseUrl: s.url, apiKey: "sk_test" }).stream("w", {
      ...fast,
      onReconnect: (i) => reconnects.push(i),
    }))
      seqs.push(e.seq);
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(s.subscribes).toEqual([
      { type: "subscribe", workflow_id: "w", last_event_id: 0 },
      { type: "subscribe", workflow_id: "w", last_event_id: 2 },
    ]);
    expect(s.handshakes[0]!["x-api-key"]).toBe("sk_test");
    expect(reconnects.map((r) => r.reason)).toEqual([
      "connection closed (1012 Service restart: resubscribe with last_event_id)",
    ]);
  });

  it("fails with a typed error carrying the close reason on 4404 and 4400, without reconnecting", async () => {
    for (const [code, reason, Cls, status] of [
      [4404, "Task not found (workflow_id w)", NotFoundError, 404],
      [4400, 'Invalid types: unknown event type "NOPE" (workflow_id w)', BadRequestError, 400],
    ] as const) {
      const s = await scripted([(ws) => ws.close(code, reason)]);
      const reconnects: ReconnectInfo[] = [];
      const it = new TogClient({ baseUrl: s.url })
        .stream("w", { ...fast, onReconnect: (i) => reconnects.push(i) })
        [Symbol.asyncIterator]();
      const err = await it.next().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(Cls);
      expect(err).toMatchObject({ status, message: reason, body: { error: reason, close_code: code } });
      expect(reconnects).toEqual([]);
      expect(s.subscribes).toHaveLength(1);
      await new Promise((r) => server!.close(r));
      server = undefined;
    }
  });

  it("stops at once with an AbortError when the signal fires, and closes the socket", async () => {
    let closedBy: number | undefined;
    const s = await scripted([
      (ws) => {
        ws.on("close", (code) => (closedBy = code));
        ws.send(event(1));
        ws.send(event(2));
      },
    ]);
    const ctrl = new AbortController();
    const seqs: number[] = [];
    const reading = (async () => {
      for await (const e of new TogClient({ baseUrl: s.url }).stream("w", { ...fast, signal: ctrl.signal })) {
        seqs.push(e.seq);
        if (e.seq === 2) ctrl.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(seqs).toEqual([1, 2]);
    await expect.poll(() => closedBy).toBe(1000);
    expect(s.subscribes).toHaveLength(1);
  });

  it("reconnects after 4429, 4503 and 1011, resuming where it was", async () => {
    const s = await scripted([
      (ws) => {
        ws.send(event(1));
        ws.close(4429, "Rate limit exceeded: at most 100 messages per second");
      },
      (ws) => ws.close(4503, "Event stream unavailable (workflow_id w)"),
      (ws) => ws.close(1011, "Internal server error"),
      (ws) => ws.send(event(2, "ERROR_OCCURRED", { terminal: true, status: "FAILED" })),
    ]);
    const reconnects: ReconnectInfo[] = [];
    const seqs: number[] = [];
    for await (const e of new TogClient({ baseUrl: s.url }).stream("w", {
      ...fast,
      onReconnect: (i) => reconnects.push(i),
    }))
      seqs.push(e.seq);
    expect(seqs).toEqual([1, 2]);
    expect(reconnects.map((r) => r.reason)).toEqual([
      "connection closed (4429 Rate limit exceeded: at most 100 messages per second)",
      "connection closed (4503 Event stream unavailable (workflow_id w))",
      "connection closed (1011 Internal server error)",
    ]);
    expect(reconnects.map((r) => r.lastEventId)).toEqual(["1700000000000-1", "1700000000000-1", "1700000000000-1"]);
    expect(s.subscribes.map((m) => m.last_event_id)).toEqual([0, 1, 1, 1]);
  });
});
