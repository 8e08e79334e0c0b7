import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { markStreaming } from "../src/index.ts";
import { sleep, startTestApp, type TestApp } from "./edge-harness.ts";

// The documented 30/30/60 s (docs/api.md "Limits"), scaled down.
const timeouts = { readTimeoutMs: 300, writeTimeoutMs: 500, idleTimeoutMs: 700 };
let app: TestApp;

beforeAll(async () => {
  app = await startTestApp({
    timeouts,
    routes: (r) => {
      r.get("/fast", (_q, s) => void s.json({ ok: true }));
      r.get("/slow", async (_q, s) => {
        await sleep(900);
        if (!s.headersSent) s.json({ ok: true });
      });
      r.get("/slow-body", async (_q, s) => {
        s.setHeader("content-type", "application/json");
        s.write('{"ok":');
        await sleep(900);
        if (!s.destroyed) s.end("true}");
      });
      r.get("/stream", async (_q, s) => {
        markStreaming(s);
        s.setHeader("content-type", "text/event-stream");
        for (let i = 0; i < 5; i++) {
          s.write(`data: ${i}\n\n`);
          await sleep(200);
        }
        s.end();
      });
      r.post("/upload", (req, s) => void s.json({ got: req.body as unknown }));
    },
  });
});

afterAll(() => app.close());

/** Opens a raw connection, writes `text`, resolves with everything received until the server closes it. */
function rawExchange(text: string, port: number): Promise<{ data: string; closedAfterMs: number }> {
  return new Promise((resolve, reject) => {
    const started = Date.now();
    const socket = net.connect(port, "127.0.0.1", () => socket.write(text));
    let data = "";
    socket.on("data", (d) => (data += d.toString()));
    socket.on("error", reject);
    socket.on("close", () => resolve({ data, closedAfterMs: Date.now() - started }));
  });
}

describe("server timeouts", () => {
  it("serves a fast response normally", async () => {
    expect((await fetch(`${app.url}/fast`)).status).toBe(200);
  });

  it("answers 503 + Retry-After JSON when a response has not started within the write timeout", async () => {
    const started = Date.now();
    const res = await fetch(`${app.url}/slow`);
    const took = Date.now() - started;
    expect(res.status).toBe(503);
    expect(res.headers.get("retry-after")).toBe("1");
    expect(res.headers.get("connection")).toBe("close");
    expect(await res.json()).toEqual({ error: "Request timed out" });
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(850);
  });

  it("cuts a non-streaming response that started but exceeds the write timeout", async () => {
    const started = Date.now();
    await expect(fetch(`${app.url}/slow-body`).then((r) => r.text())).rejects.toThrow();
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(450);
    expect(took).toBeLessThan(850);
  });

  it("lets a streaming response (markStreaming) run past the write timeout", async () => {
    const res = await fetch(`${app.url}/stream`);
    expect(res.status).toBe(200);
    const text = await res.text();
    expect(text).toBe([0, 1, 2, 3, 4].map((i) => `data: ${i}\n\n`).join(""));
  });

  it("answers 408 and closes when the request body does not arrive within the read timeout", async () => {
    const { data, closedAfterMs } = await rawExchange(
      'POST /upload HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"query":',
      app.server.port,
    );
    expect(data).toMatch(/^HTTP\/1\.1 408/);
    expect(closedAfterMs).toBeGreaterThanOrEqual(250);
    expect(closedAfterMs).toBeLessThan(2_000);
  });

  it("closes an idle keep-alive connection after the idle timeout", async () => {
    const { data, closedAfterMs } = await rawExchange(
      "GET /fast HTTP/1.1\r\nHost: x\r\nConnection: keep-alive\r\n\r\n",
      app.server.port,
    );
    expect(data).toMatch(/^HTTP\/1\.1 200/);
    expect(closedAfterMs).toBeGreaterThanOrEqual(650);
    expect(closedAfterMs).toBeLessThan(3_000);
  });
});
