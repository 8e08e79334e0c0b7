// The console page's stream reader (web/src/stream.ts) against a stand-in SSE server
// that misbehaves on purpose: drops connections mid-event, replays events the client already
// has, answers 502 for a while, and honours Last-Event-ID. The reader must deliver one
// gap-free, duplicate-free sequence and stop at the terminal event. (The real stack is the
// browser test's job: tests-e2e/console.)
import http from "node:http";
import type { AddressInfo } from "node:net";
import { afterEach, describe, expect, it } from "vitest";
import { followTaskEvents, StreamRefusedError, type StreamState } from "../web/src/stream.ts";
import type { TaskEvent } from "../web/src/api.ts";

const WF = "3f2c0000-0000-4000-8000-000000000001";

function event(seq: number, last = false): TaskEvent {
  return {
    workflow_id: WF,
    type: last ? "WORKFLOW_COMPLETED" : "LLM_PARTIAL",
    agent_id: "a",
    message: "",
    timestamp: new Date().toISOString(),
    seq,
    stream_id: `1700000000000-${seq}`,
    data: last ? { result: "done" } : { chunk: `c${seq} ` },
  };
}
const frame = (e: TaskEvent) => `id: ${e.stream_id}\nevent: ${e.type}\ndata: ${JSON.stringify(e)}\n\n`;

interface Stand {
  url: string;
  /** Last-Event-ID of every request, in order ("" when absent). */
  resumes: string[];
  apiKeys: (string | undefined)[];
  close(): Promise<void>;
}

const servers: Stand[] = [];
afterEach(async () => {
  await Promise.all(servers.splice(0).map((s) => s.close()));
});

async function stand(
  handler: (req: http.IncomingMessage, res: http.ServerResponse, attempt: number, after: number) => void,
): Promise<Stand> {
  const resumes: string[] = [];
  const apiKeys: (string | undefined)[] = [];
  const server = http.createServer((req, res) => {
    const id = String(req.headers["last-event-id"] ?? "");
    resumes.push(id);
    apiKeys.push(req.headers["x-api-key"] as string | undefined);
    const after = id === "" ? 0 : Number(id.includes("-") ? id.split("-")[1] : id);
    handler(req, res, resumes.length, after);
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const s: Stand = {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/api/v1`,
    resumes,
    apiKeys,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  servers.push(s);
  return s;
}

const sse = (res: http.ServerResponse, retryMs = 20) => {
  res.writeHead(200, { "Content-Type": "text/event-stream" });
  res.write(`: stream open\nretry: ${retryMs}\n\n`);
};

async function follow(url: string, extra: Partial<Parameters<typeof followTaskEvents>[0]> = {}) {
  const events: TaskEvent[] = [];
  const states: StreamState[] = [];
  await followTaskEvents({
    baseUrl: url,
    taskId: WF,
    headers: { "X-API-Key": "sk_test" },
    onEvent: (e) => events.push(e),
    onState: (s) => states.push(s),
    maxBackoffMs: 50,
    ...extra,
  });
  return { events, states };
}

describe("followTaskEvents", () => {
  it("resumes after every dropped connection with Last-Event-ID and delivers each event once, in order", async () => {
    const total = 30;
    const s = await stand((_req, res, attempt, after) => {
      sse(res);
      // Each connection replays two events the client already has (at-least-once delivery),
      // sends a few new ones, then dies mid-frame.
      const from = Math.max(1, after - 1);
      const to = Math.min(total, after + 7);
      for (let seq = from; seq <= to; seq++) res.write(frame(event(seq, seq === total)));
      // A bare id (what the server sends for a filtered-out event) moves the resume point too.
      res.write(`id: 1700000000000-${to}\n\n`);
      if (to === total) return res.end();
      res.write(`id: 1700000000000-${to + 1}\ndata: {"trunc`);
      setTimeout(() => res.socket?.destroy(), 5 + attempt);
    });
    const { events, states } = await follow(s.url);
    expect(events.map((e) => e.seq)).toEqual(Array.from({ length: total }, (_, i) => i + 1));
    expect(events.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
    expect(s.resumes.length).toBeGreaterThanOrEqual(4);
    expect(s.resumes[0]).toBe("");
    // Each resume names the last complete event, never the truncated one.
    for (const id of s.resumes.slice(1)) expect(Number(id.split("-")[1]) % 7).toBe(0);
    expect(s.apiKeys.every((k) => k === "sk_test")).toBe(true);
    expect(states.at(-1)).toBe("ended");
    expect(states).toContain("reconnecting");
  });

  it("keeps retrying with backoff while the stream answers 502, then resumes where it was", async () => {
    const s = await stand((_req, res, attempt, after) => {
      if (attempt === 1) {
        sse(res);
        for (let seq = 1; seq <= 3; seq++) res.write(frame(event(seq)));
        return res.end();
      }
      if (attempt <= 4) {
        res.writeHead(502, { "Content-Type": "application/json" }).end('{"error":"Upstream unavailable"}');
        return;
      }
      sse(res);
      for (let seq = after + 1; seq <= 5; seq++) res.write(frame(event(seq, seq === 5)));
      res.end();
    });
    const { events } = await follow(s.url);
    expect(events.map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    expect(s.resumes).toEqual(["", "1700000000000-3", "1700000000000-3", "1700000000000-3", "1700000000000-3"]);
  });

  it("stops on 204 (nothing after the resume point) and starts after a given seq", async () => {
    const s = await stand((_req, res) => res.writeHead(204).end());
    const { events, states } = await follow(s.url, { afterSeq: 12 });
    expect(events).toEqual([]);
    expect(s.resumes).toEqual(["12"]);
    expect(states.at(-1)).toBe("ended");
  });

  it("gives up on a refusal (401, 404) with the server's message instead of retrying", async () => {
    const s = await stand((_req, res) =>
      res.writeHead(404, { "Content-Type": "application/json" }).end('{"error":"Task not found"}'),
    );
    await expect(follow(s.url)).rejects.toSatisfy(
      (e: unknown) => e instanceof StreamRefusedError && e.status === 404 && e.message === "Task not found",
    );
    expect(s.resumes).toHaveLength(1);
  });

  it("gives up a silent connection and resumes (idle watchdog)", async () => {
    const s = await stand((_req, res, attempt, after) => {
      sse(res);
      if (attempt === 1) {
        res.write(frame(event(1)));
        return; // then silence, connection left open
      }
      for (let seq = after + 1; seq <= 2; seq++) res.write(frame(event(seq, seq === 2)));
      res.end();
    });
    const { events } = await follow(s.url, { idleTimeoutMs: 300 });
    expect(events.map((e) => e.seq)).toEqual([1, 2]);
    expect(s.resumes).toEqual(["", "1700000000000-1"]);
  });

  it("stops quietly when the caller aborts", async () => {
    const s = await stand((_req, res) => {
      sse(res);
      res.write(frame(event(1)));
    });
    const controller = new AbortController();
    const events: TaskEvent[] = [];
    const done = followTaskEvents({
      baseUrl: s.url,
      taskId: WF,
      headers: {},
      signal: controller.signal,
      onEvent: (e) => events.push(e),
    });
    await expect.poll(() => events.length).toBe(1);
    controller.abort();
    await expect(done).resolves.toBeUndefined();
  });
});
