import http from "node:http";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, startService, type Router, type RunningService } from "../src/index.ts";
import { ROUTER_KINDS, ROUTERS } from "./routers.ts";

const ENTRY = path.join(import.meta.dirname, "fixtures/upstream.ts");
let a: RunningService;
let b: RunningService;
let streams: RunningService;
let router: Router;
let deadPort: number;

async function upstream(name: string): Promise<RunningService> {
  const port = await freePort();
  return startService({
    name,
    entry: ENTRY,
    port,
    readyPath: "/health",
    env: { PORT: String(port), UPSTREAM_NAME: name },
  });
}

beforeAll(async () => {
  [a, b, streams] = await Promise.all([upstream("a"), upstream("b"), upstream("streams")]);
  deadPort = await freePort();
});

afterAll(async () => {
  await Promise.all([a, b, streams].filter(Boolean).map((s) => s.stop()));
});

describe.each(ROUTER_KINDS)("%s router", (kind) => {
  beforeAll(async () => {
    router = await ROUTERS[kind]({
      port: 0,
      routes: [
        { prefix: "/api/v1", targets: [a.url, b.url], proxyTimeoutMs: 5_000 },
        { prefix: "/api/v1/stream/", targets: [streams.url] },
        { prefix: "/down", targets: [`http://127.0.0.1:${deadPort}`] },
      ].sort((x, y) => y.prefix.length - x.prefix.length),
    });
  });

  afterAll(async () => {
    await router?.close();
  });

  it("routes by path prefix per segment and round-robins over targets", async () => {
    const names: string[] = [];
    for (let i = 0; i < 4; i++) {
      const res = await fetch(`${router.url}/api/v1/tasks?x=${i}`, { method: "POST", body: "hi" });
      const body = (await res.json()) as { name: string; url: string; body: string };
      expect(body.url).toBe(`/api/v1/tasks?x=${i}`);
      expect(body.body).toBe("hi");
      names.push(body.name);
    }
    expect(names.sort()).toEqual(["a", "a", "b", "b"]);
    const s = (await (await fetch(`${router.url}/api/v1/stream/x`)).json()) as { name: string };
    expect(s.name).toBe("streams");
    // `/api/v1/streamx` is not under `/api/v1/stream/`
    const g = (await (await fetch(`${router.url}/api/v1/streamx`)).json()) as { name: string };
    expect(["a", "b"]).toContain(g.name);
  });

  it("forwards small, large and chunked request bodies intact", async () => {
    const echo = async (body: string | ReadableStream<Uint8Array>, extra: RequestInit = {}) =>
      (
        (await (await fetch(`${router.url}/api/v1/echo`, { method: "POST", body, ...extra })).json()) as {
          body: string;
        }
      ).body;
    expect(await echo('{"q":"é"}')).toBe('{"q":"é"}');
    const large = "x".repeat(200_000);
    expect(await echo(large)).toBe(large);
    const parts = ["one,", "two,", "three"];
    const chunked = new ReadableStream<Uint8Array>({
      pull(controller) {
        const next = parts.shift();
        if (next === undefined) controller.close();
        else controller.enqueue(new TextEncoder().encode(next));
      },
    });
    expect(await echo(chunked, { duplex: "half" } as RequestInit)).toBe("one,two,three");
  });

  it("sets X-Forwarded-* headers", async () => {
    const body = (await (await fetch(`${router.url}/api/v1/x`)).json()) as { forwarded: Record<string, string> };
    expect(body.forwarded.for).toMatch(/127\.0\.0\.1/);
    expect(body.forwarded.host).toBe(`127.0.0.1:${router.port}`);
    expect(body.forwarded.proto).toBe("http");
  });

  it("answers JSON 404 outside every route and JSON 502 when the upstream is down", async () => {
    const nf = await fetch(`${router.url}/elsewhere`);
    expect(nf.status).toBe(404);
    expect(await nf.json()).toEqual({ error: "Not found" });
    const down = await fetch(`${router.url}/down/x`);
    expect(down.status).toBe(502);
    expect(down.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await down.json()).toEqual({ error: "Upstream unavailable" });
  });

  it("passes SSE through event by event, without buffering", async () => {
    const res = await fetch(`${router.url}/api/v1/stream/sse`);
    expect(res.headers.get("content-type")).toBe("text/event-stream");
    const reader = res.body!.getReader();
    const decoder = new TextDecoder();
    const arrivals: number[] = [];
    const t0 = Date.now();
    let text = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      text += decoder.decode(value);
      arrivals.push(Date.now() - t0);
    }
    expect(text).toContain('data: {"n":3}');
    // three events 300 ms apart arrive as at least three separate chunks spread over time
    expect(arrivals.length).toBeGreaterThanOrEqual(3);
    expect(arrivals.at(-1)! - arrivals[0]!).toBeGreaterThanOrEqual(400);
  });

  it("cuts the client's response when the upstream dies mid-stream (the client can reconnect)", async () => {
    const res = await fetch(`${router.url}/api/v1/stream/sse-abort`);
    const reader = res.body!.getReader();
    const first = await reader.read();
    expect(new TextDecoder().decode(first.value)).toContain("data: one");
    const t0 = Date.now();
    const outcome = await Promise.race([
      reader.read().then(
        (r) => (r.done ? "ended" : "more data"),
        () => "cut",
      ),
      new Promise((resolve) => setTimeout(() => resolve("still open"), 5_000)),
    ]);
    expect(outcome).toBe("cut");
    expect(Date.now() - t0).toBeLessThan(3_000);
  });

  it("sends an event stream's headers before its first event", async () => {
    const t0 = Date.now();
    const res = await fetch(`${router.url}/api/v1/stream/sse-late`);
    expect(res.status).toBe(200);
    expect(Date.now() - t0).toBeLessThan(1_500);
    expect(await res.text()).toBe("data: late\n\n");
  });

  it("tunnels upgraded (WebSocket) connections", async () => {
    const { line, socket } = await new Promise<{ line: string; socket: import("node:net").Socket }>(
      (resolve, reject) => {
        const req = http.request(`${router.url}/api/v1/stream/ws`, {
          headers: { Connection: "Upgrade", Upgrade: "websocket" },
        });
        req.on("upgrade", (res, socket, head) => {
          expect(res.statusCode).toBe(101);
          // the first frame may arrive together with the 101 response
          if (head.length > 0) resolve({ line: head.toString(), socket });
          else socket.once("data", (d: Buffer) => resolve({ line: d.toString(), socket }));
        });
        req.on("error", reject);
        req.end();
      },
    );
    expect(line).toBe("hello from streams /api/v1/stream/ws\n");
    const echoed = await new Promise<string>((resolve) => {
      socket.once("data", (d: Buffer) => resolve(d.toString()));
      socket.write("ping");
    });
    expect(echoed).toBe("ping");
    socket.destroy();
  });
});
