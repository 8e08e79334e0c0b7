// The SDK's resume rules against a scripted SSE server (a real HTTP server on a free port whose
// answers the test chooses): it honours `retry:`, sends Last-Event-ID, drops events it already
// has (at-least-once delivery), waits Retry-After on a 503, fails on 404, and ends at the
// terminal event. The same rules against the real system: tests-e2e/clients/sdk.test.ts.
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { NotFoundError, TogClient, type ReconnectInfo } from "../src/index.ts";

type Step = (req: http.IncomingMessage, res: http.ServerResponse) => void;
let server: http.Server | undefined;

async function scripted(
  steps: Step[],
): Promise<{ url: string; requests: http.IncomingHttpHeaders[]; times: number[] }> {
  const requests: http.IncomingHttpHeaders[] = [];
  const times: number[] = [];
  server = http.createServer((req, res) => {
    requests.push(req.headers);
    times.push(Date.now());
    const step = steps[requests.length - 1];
    if (!step) {
      res.writeHead(500).end();
      return;
    }
    step(req, res);
  });
  await new Promise<void>((r) => server!.listen(0, "127.0.0.1", r));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, requests, times };
}
afterEach(async () => {
  await new Promise((r) => (server ? server.close(r) : r(undefined)));
  server = undefined;
});

const ev = (seq: number, type = "PROGRESS", data: Record<string, unknown> = {}) =>
  `id: 1700000000000-${seq}\nevent: ${type}\ndata: ${JSON.stringify({ workflow_id: "w", type, agent_id: "a", message: "", timestamp: "2026-01-01T00:00:00Z", seq, stream_id: `1700000000000-${seq}`, data })}\n\n`;
const sse = (res: http.ServerResponse) => res.writeHead(200, { "Content-Type": "text/event-stream" });

describe("SSE resume rules", () => {
  it("honours retry:, resumes with Last-Event-ID, drops duplicates, ends at the terminal event", async () => {
    const s = await scripted([
      (_q, res) => {
        sse(res);
        res.end(`retry: 300\n\n${ev(1)}${ev(2)}`); // connection ends without the terminal event
      },
      (_q, res) => {
        sse(res);
        res.end(`${ev(2)}${ev(3)}${ev(4, "WORKFLOW_COMPLETED", { result: "ok" })}${ev(5)}`); // 2 again: at least once
      },
    ]);
    const tog = new TogClient({ baseUrl: s.url, apiKey: "sk_test" });
    const reconnects: ReconnectInfo[] = [];
    const seqs: number[] = [];
    for await (const e of tog.stream("w", { onReconnect: (i) => reconnects.push(i) })) seqs.push(e.seq);
    expect(seqs).toEqual([1, 2, 3, 4]);
    expect(s.requests[0]!["last-event-id"]).toBeUndefined();
    expect(s.requests[1]!["last-event-id"]).toBe("1700000000000-2");
    expect(s.requests[1]!["x-api-key"]).toBe("sk_test");
    expect(reconnects).toEqual([
      { attempt: 1, lastEventId: "1700000000000-2", delayMs: 300, reason: "the server ended the stream" },
    ]);
    expect(s.times[1]! - s.times[0]!).toBeGreaterThanOrEqual(290);
  });

  it("waits Retry-After on 503, then backs off with jitter on repeated failures", async () => {
    const s = await scripted([
      (_q, res) =>
        res
          .writeHead(503, { "Content-Type": "application/json", "Retry-After": "1" })
          .end('{"error":"System overloaded"}'),
      (_q, res) => res.writeHead(502, { "Content-Type": "application/json" }).end('{"error":"Upstream unavailable"}'),
      (_q, res) => {
        sse(res);
        res.end(ev(1, "WORKFLOW_COMPLETED", { result: "ok" }));
      },
    ]);
    const reconnects: ReconnectInfo[] = [];
    const seqs: number[] = [];
    for await (const e of new TogClient({ baseUrl: s.url }).stream("w", {
      onReconnect: (i) => reconnects.push(i),
      backoff: { initialMs: 100 },
    }))
      seqs.push(e.seq);
    expect(seqs).toEqual([1]);
    expect(reconnects.map((r) => r.reason)).toEqual(["HTTP 503: System overloaded", "HTTP 502: Upstream unavailable"]);
    expect(reconnects[0]!.delayMs).toBe(1000);
    // attempt 2: exponential from 100 ms (200 ms), jittered into [100, 200]
    expect(reconnects[1]!.delayMs).toBeGreaterThanOrEqual(100);
    expect(reconnects[1]!.delayMs).toBeLessThanOrEqual(200);
  });

  it("fails at once on 404 with the server's message; ends quietly on 204", async () => {
    const s = await scripted([
      (_q, res) => res.writeHead(404, { "Content-Type": "application/json" }).end('{"error":"Task not found"}'),
    ]);
    const it404 = new TogClient({ baseUrl: s.url }).stream("w")[Symbol.asyncIterator]();
    await expect(it404.next()).rejects.toSatisfy((e) => e instanceof NotFoundError && e.message === "Task not found");
    await new Promise((r) => server!.close(r));
    const t = await scripted([(_q, res) => res.writeHead(204).end()]);
    const seqs: number[] = [];
    for await (const e of new TogClient({ baseUrl: t.url }).stream("w", { lastEventId: 9 })) seqs.push(e.seq);
    expect(seqs).toEqual([]);
    expect(t.requests[0]!["last-event-id"]).toBe("9");
  });

  it("with a types filter asks the server for the terminal types too and shows only the requested ones", async () => {
    const s = await scripted([
      (req, res) => {
        expect(new URL(req.url!, "http://x").searchParams.get("types")).toBe(
          "LLM_PARTIAL,WORKFLOW_COMPLETED,ERROR_OCCURRED",
        );
        sse(res);
        res.end(
          `${ev(1, "LLM_PARTIAL", { chunk: "a" })}${ev(2, "ERROR_OCCURRED", { terminal: true, status: "FAILED" })}`,
        );
      },
    ]);
    const types: string[] = [];
    for await (const e of new TogClient({ baseUrl: s.url }).stream("w", { types: ["LLM_PARTIAL"] })) types.push(e.type);
    expect(types).toEqual(["LLM_PARTIAL"]);
    expect(s.requests).toHaveLength(1); // ended at the (hidden) terminal event, no reconnect
  });
});
