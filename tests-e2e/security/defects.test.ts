// Issue 11, end to end: each defect of the black-box probe, against the running system (every
// service its own process, the public router in front, authentication on).
import { readdirSync, readFileSync, readlinkSync } from "node:fs";
import http from "node:http";
import net from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import type { Bus } from "@tog/bus";
import { AccessTokens, PUBLISHED_TOKEN_SECRETS } from "@tog/edge";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import {
  createTask,
  EventPublisher,
  isTerminalMessage,
  openEnvBus,
  range,
  SseClient,
  sseUrl,
  WsClient,
  wsUrl,
  type Json,
} from "../stream/support.ts";

let env: E2eEnvironment;
let bus: Bus;
let alice: { key: string; userId: string };
let bob: { key: string; userId: string };

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "1000000", RATE_LIMIT_BURST: "100000", MAX_BODY_BYTES: "65536" },
    only: ["gateway", "orchestrator", "stream", "session"],
    // 1,000 SSE opens of one user within a second or two (5.): above the default stream-open burst.
    services: {
      stream: {
        STREAM_MAX_BUFFER_BYTES: "16384",
        STREAM_WS_MAX_MESSAGES_PER_SECOND: "100000",
        RATE_LIMIT_STREAM_RPM: "1000000",
        RATE_LIMIT_STREAM_BURST: "100000",
      },
    },
  });
  bus = await openEnvBus(env);
  const a = await env.createApiKey({ user: "alice@example.com", createUser: true });
  const b = await env.createApiKey({ user: "bob@example.com", createUser: true });
  alice = { key: a.key, userId: a.user_id };
  bob = { key: b.key, userId: b.user_id };
}, 120_000);
afterAll(async () => {
  await bus?.close();
  await env?.close();
});

const json = { "Content-Type": "application/json" };
const as = (who: { key: string }) => ({ "X-API-Key": who.key });

describe("1. forged bearer tokens", () => {
  it.each(PUBLISHED_TOKEN_SECRETS)("a token signed with the published secret %s opens nothing", async (secret) => {
    const forged = (await new AccessTokens({ secret, ttlSeconds: 600 }).issue(alice.userId)).token;
    const auth = { Authorization: `Bearer ${forged}` };
    const taskId = await createTask(env.baseUrl, alice.key);
    expect((await request(`${env.baseUrl}/tasks`, { headers: auth })).status).toBe(401);
    expect((await request(`${env.baseUrl}/tasks/${taskId}`, { headers: auth })).status).toBe(401);
    expect((await request(`${env.baseUrl}/sessions`, { headers: auth })).status).toBe(401);
    const submit = await request(`${env.baseUrl}/tasks/stream`, {
      method: "POST",
      headers: { ...json, ...auth },
      body: JSON.stringify({ query: "x" }),
    });
    expect(submit.status).toBe(401);
    const sse = await fetch(sseUrl(env.baseUrl, { workflow_id: taskId }), { headers: auth });
    expect(sse.status).toBe(401);
    await sse.body?.cancel();
    const ws = new WsClient(wsUrl(env.baseUrl), auth);
    await ws.opened.catch(() => undefined);
    await ws.closed;
    expect(ws.refusedStatus).toBe(401);
  });

  // Bearer tokens are accepted where docs/api.md "Authentication" allows them: POST /tasks/stream and the streams.
  const submitWithToken = (baseUrl: string, token: string) =>
    request(`${baseUrl}/tasks/stream`, {
      method: "POST",
      headers: { ...json, Authorization: `Bearer ${token}` },
      body: JSON.stringify({ query: "with a token" }),
    });

  it("a token from the environment's own secret works (auth on keeps working)", async () => {
    const token = await env.accessToken("alice@example.com");
    expect((await submitWithToken(env.baseUrl, token)).status).toBe(201);
  });

  it("a service given a published secret refuses to start, naming the problem", async () => {
    await expect(env.startVariant("gateway", { AUTH_TOKEN_SECRET: PUBLISHED_TOKEN_SECRETS[0]! })).rejects.toThrow(
      /published value/,
    );
    await expect(env.startVariant("stream", { AUTH_TOKEN_SECRET: "" })).rejects.toThrow(
      /AUTH_TOKEN_SECRET must be set/,
    );
  }, 60_000);

  it("rotation: a gateway with a new secret still accepts tokens of the previous one", async () => {
    const token = await env.accessToken("alice@example.com");
    const rotated = await env.startVariant("gateway", {
      AUTH_TOKEN_SECRET: "r".repeat(64),
      AUTH_TOKEN_SECRET_PREVIOUS: env.env.AUTH_TOKEN_SECRET!,
    });
    expect((await submitWithToken(rotated.baseUrl, token)).status).toBe(201);
  }, 60_000);
});

/** Resident set size of a process, in bytes. */
function rssOf(pid: number): number {
  const line = readFileSync(`/proc/${pid}/status`, "utf8")
    .split("\n")
    .find((l) => l.startsWith("VmRSS:"))!;
  return Number(line.replace(/\D+/g, "")) * 1024;
}

const SLOW_WS_LOG = "websocket client too slow: closing";

/**
 * Resolves on the stream service's next "too slow" log line. The server closes a slow peer with
 * 1013 and cuts its socket a second later; the client must resume reading within that second to
 * receive the close frame queued behind its backlog, so the tests resume when this resolves.
 */
function nextSlowClose(timeoutMs: number): Promise<unknown> {
  const since = Date.now();
  return env
    .service("stream")
    .waitForLog((r) => r.msg === SLOW_WS_LOG && Date.parse(String(r.time)) >= since - 5, timeoutMs);
}

/** Opens a WebSocket as `who` and returns it with its raw socket and its close code. */
async function openRawWs(
  url: string,
  who: { key: string },
): Promise<{ ws: WebSocket; socket: net.Socket; closed: Promise<number>; messages: Json[] }> {
  const ws = new WebSocket(url, { headers: as(who) });
  const messages: Json[] = [];
  ws.on("message", (data) => messages.push(JSON.parse(data.toString()) as Json));
  const closed = new Promise<number>((resolve) => ws.once("close", (code) => resolve(code)));
  await new Promise<void>((resolve, reject) => {
    ws.once("open", () => resolve());
    ws.once("error", reject);
  });
  return { ws, socket: (ws as unknown as { _socket: net.Socket })._socket, closed, messages };
}

const within = <T>(p: Promise<T>, ms: number, what: string): Promise<T> =>
  Promise.race([p, new Promise<never>((_, reject) => setTimeout(() => reject(new Error(what)), ms))]);

describe("2. WebSocket flood with a paused reader", () => {
  it("pings from a client that never reads: memory stays bounded and the connection is closed with 1013", async () => {
    const stream = env.service("stream");
    const before = rssOf(stream.pid);
    // Generous: the kernel's loopback buffers, in both directions and on both sides of the router,
    // must fill before the service's own bound is reached, and on a loaded CI host the service
    // works through that backlog at a fraction of its usual rate (one run took over 30 s).
    const slow = nextSlowClose(110_000);
    const { ws, socket, closed } = await openRawWs(wsUrl(env.baseUrl), alice);
    socket.pause(); // the reader stops reading: replies pile up on the server
    let sent = 0;
    let open = true;
    void closed.then(() => (open = false));
    void slow.then(
      () => (open = false),
      () => undefined,
    );
    // JSON pings and ping frames with 125-byte payloads, each asking for a reply, until the server
    // gives up on the connection: the kernel's buffers on loopback grow to tens of MB (tcp_rmem)
    // before the service's own bound is reached, so up to 1,200,000 (~150 MB of replies). At most
    // 80,000 a second: under the per-connection message limit (100,000 here, its maximum), which
    // would otherwise close the connection first (4429).
    const payload = Buffer.alloc(125, 0x61);
    let windowStart = Date.now();
    let inWindow = 0;
    while (open && sent < 1_200_000) {
      for (let i = 0; i < 1_000 && open; i++, sent++, inWindow++) {
        if (i % 10 === 0) ws.send('{"type":"ping"}');
        else ws.ping(payload);
      }
      await new Promise((r) => setImmediate(r));
      if (socket.writableLength > 8 * 1024 * 1024) await new Promise((r) => setTimeout(r, 10));
      if (inWindow >= 80_000) {
        // The server counts by its own clock: leave a margin past the second.
        await new Promise((r) => setTimeout(r, Math.max(0, windowStart + 1_100 - Date.now())));
        windowStart = Date.now();
        inWindow = 0;
      }
    }
    await within(slow, 100_000, `server never closed the flooding connection (${sent} messages sent)`);
    socket.resume();
    expect(await within(closed, 20_000, "the client never saw the close")).toBe(1013);
    const after = rssOf(stream.pid);
    expect(after - before).toBeLessThan(64 * 1024 * 1024);
    // the service still serves others
    const other = new WsClient(wsUrl(env.baseUrl), as(bob));
    await other.opened;
    other.send({ type: "ping" });
    await other.waitForMessage((m: Json) => m.type === "pong");
    other.close();
  }, 150_000);

  it("a subscriber that stops reading events is closed with 1013 (buffer bound) and resumes with last_event_id", async () => {
    const publisher = new EventPublisher(bus, await createTask(env.baseUrl, alice.key));
    const slow = nextSlowClose(50_000);
    const { ws, socket, closed, messages } = await openRawWs(
      wsUrl(env.baseUrl, { workflow_id: publisher.taskId }),
      alice,
    );
    await publisher.emit(1);
    await within(
      (async () => {
        while (!messages.some((m) => m.seq === 1)) await new Promise((r) => setTimeout(r, 10));
      })(),
      10_000,
      "the first event",
    );
    socket.pause();
    // 8 KB events: the kernel's socket buffers fill first, then the 16 KiB bound of this service.
    let stop = false;
    void slow.then(
      () => (stop = true),
      () => undefined,
    );
    const big = "x".repeat(8_000);
    for (let i = 0; i < 4_000 && !stop; i++) await publisher.emitChunk(big);
    await within(slow, 45_000, "server never closed the slow subscriber");
    socket.resume();
    expect(await within(closed, 20_000, "the client never saw the close")).toBe(1013);
    expect(ws.readyState).toBe(WebSocket.CLOSED);
    // Closed before the task ended: the client resumes after the last event it got and receives
    // the rest. (The service may have flushed every event it had queued before closing: the cut
    // can fall after the last event published so far, which is why the terminal event comes after.)
    const lastSeen = Math.max(...messages.filter((m) => typeof m.seq === "number").map((m) => m.seq as number));
    await publisher.emit(1, { last: true });
    const resumed = new WsClient(
      wsUrl(env.baseUrl, { workflow_id: publisher.taskId, last_event_id: String(lastSeen) }),
      as(alice),
    );
    await resumed.opened;
    await resumed.waitFor((c) => c.messages.some(isTerminalMessage), 20_000, "the terminal event");
    expect(resumed.events(publisher.taskId).map((m) => m.seq)).toEqual(range(lastSeen + 1, publisher.seq));
    resumed.close();
  }, 100_000);
});

describe("3. client mistakes that reached PostgreSQL", () => {
  const cases: [string, string, string, unknown][] = [
    ["NUL in query", "POST", "/tasks", { query: "a\u0000b" }],
    ["NUL in session_id", "POST", "/tasks", { query: "q", session_id: "s\u0000" }],
    ["NUL in a context key", "POST", "/tasks", { query: "q", context: { "k\u0000": 1 } }],
    ["NUL in a context value", "POST", "/tasks", { query: "q", context: { role: "x\u0000" } }],
    ["lone surrogate in context", "POST", "/tasks", { query: "q", context: { a: "\ud800" } }],
    [
      "NUL in an approval field",
      "POST",
      "/approvals/decision",
      { approval_id: "a\u0000", workflow_id: "w", approved: true },
    ],
  ];
  it.each(cases)("%s → 400 JSON, nothing written", async (_name, method, path, body) => {
    const before = (await request<{ total_count: number }>(`${env.baseUrl}/tasks`, { headers: as(bob) })).body
      .total_count;
    const res = await request(`${env.baseUrl}${path}`, {
      method,
      headers: { ...json, ...as(bob) },
      body: JSON.stringify(body),
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(/^Invalid request/) });
    expect(
      (await request<{ total_count: number }>(`${env.baseUrl}/tasks`, { headers: as(bob) })).body.total_count,
    ).toBe(before);
  });

  it("5,000 levels of nesting in context → 400, not a stack overflow", async () => {
    const deep = `${"[".repeat(5_000)}${"]".repeat(5_000)}`;
    const res = await request(`${env.baseUrl}/tasks`, {
      method: "POST",
      headers: { ...json, ...as(bob), "Idempotency-Key": "deep-1" },
      body: `{"query":"q","context":{"x":${deep}}}`,
    });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: expect.stringMatching(/nested too deeply/) });
  });

  it("NUL in a cancel reason, a query parameter and a path parameter → 400", async () => {
    const id = await createTask(env.baseUrl, bob.key);
    const cancel = await request(`${env.baseUrl}/tasks/${id}/cancel`, {
      method: "POST",
      headers: { ...json, ...as(bob) },
      body: JSON.stringify({ reason: "r\u0000" }),
    });
    expect(cancel.status).toBe(400);
    for (const url of [
      `${env.baseUrl}/tasks?status=%00`,
      `${env.baseUrl}/sessions/a%00b`,
      `${env.baseUrl}/tasks/a%00b`,
    ]) {
      const res = await request(url, { headers: as(bob) });
      expect(res.status, url).toBe(400);
      expect(res.body).toEqual({ error: expect.any(String) });
    }
  });
});

function raw(port: number, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      const text = Buffer.concat(chunks).toString("latin1");
      const [head = "", body = ""] = text.split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
    });
    socket.write(bytes);
    setTimeout(() => socket.destroy(), 5_000).unref();
  });
}

describe("4. errors that were not JSON", () => {
  const ALL = ["gateway", "stream", "session"];
  const requests: [string, string, number, string[]][] = [
    ["unknown method", "BREW /api/v1/health HTTP/1.1\r\nHost: x\r\n\r\n", 400, ALL],
    ["malformed request line", "GET /api/v1/health HTP/1.1\r\n\r\n", 400, ALL],
    ["malformed header", "GET /api/v1/health HTTP/1.1\r\nHost: x\r\nNo Colon\r\n\r\n", 400, ALL],
    ["oversized headers", `GET /api/v1/health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`, 431, ALL],
    [
      "Expect other than 100-continue",
      "POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\nContent-Length: 2\r\n\r\n{}",
      417,
      ALL,
    ],
    [
      "WebSocket upgrade without Sec-WebSocket-Key",
      `GET /api/v1/stream/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      400,
      ["stream"],
    ],
  ];
  it.each(requests)("%s → JSON at the public port and at each service", async (_name, bytes, status, services) => {
    const ports = [env.stack.router.port, ...services.map((s) => env.service(s).port!)];
    for (const port of ports) {
      const res = await raw(port, bytes);
      expect(res.status, `port ${port}`).toBe(status);
      expect(res.headers).toContain("content-type: application/json");
      expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
    }
  });
});

describe("5. the public port", () => {
  it("1,000 idle SSE clients of one user do not block another user's stream", async () => {
    const idleTask = await createTask(env.baseUrl, alice.key);
    const agent = new http.Agent({ keepAlive: false, maxSockets: Infinity });
    const idle: http.ClientRequest[] = [];
    try {
      for (let batch = 0; batch < 10; batch++) {
        await Promise.all(
          Array.from(
            { length: 100 },
            () =>
              new Promise<void>((resolve, reject) => {
                const req = http.get(
                  sseUrl(env.baseUrl, { workflow_id: idleTask }),
                  { agent, headers: as(alice) },
                  (res) => {
                    if (res.statusCode === 200) resolve();
                    else reject(new Error(`idle SSE got ${res.statusCode}`));
                  },
                );
                req.on("error", reject);
                idle.push(req);
              }),
          ),
        );
      }
      const publisher = new EventPublisher(bus, await createTask(env.baseUrl, bob.key));
      const live = new SseClient(sseUrl(env.baseUrl, { workflow_id: publisher.taskId }), as(bob));
      await live.waitFor((c) => c.status === 200, 15_000, "bob's stream to open");
      await publisher.emit(3, { last: true });
      await live.waitFor((c) => c.frames.some((f) => f.event === "WORKFLOW_COMPLETED"), 15_000, "bob's events");
      live.close();
    } finally {
      for (const r of idle) r.destroy();
      agent.destroy();
    }
  }, 120_000);
});

describe("6. a declared Content-Length over MAX_BODY_BYTES", () => {
  it("is answered 413 at once, through the public port and at the gateway", async () => {
    for (const port of [env.stack.router.port, env.service("gateway").port!]) {
      const started = Date.now();
      const res = await raw(
        port,
        `POST /api/v1/tasks HTTP/1.1\r\nHost: x\r\nX-API-Key: ${bob.key}\r\nContent-Type: application/json\r\nContent-Length: 100000000\r\n\r\n{"query":`,
      );
      expect(res.status).toBe(413);
      expect(JSON.parse(res.body)).toEqual({ error: "Request body too large" });
      expect(Date.now() - started).toBeLessThan(3_000);
    }
  });
});

const expectNosniffNoStore = (headers: Headers | http.IncomingHttpHeaders, what: string) => {
  const get = (name: string) => (headers instanceof Headers ? headers.get(name) : headers[name]);
  expect(get("x-content-type-options"), what).toBe("nosniff");
  expect(get("cache-control"), what).toBe("no-store");
};

describe("headers", () => {
  it("nosniff and no-store on data and errors through the router", async () => {
    const id = await createTask(env.baseUrl, bob.key);
    for (const url of [
      `${env.baseUrl}/tasks`,
      `${env.baseUrl}/tasks/${id}`,
      `${env.baseUrl}/sessions`,
      `${env.baseUrl}/nope`,
    ]) {
      const res = await fetch(url, { headers: as(bob) });
      expectNosniffNoStore(res.headers, url);
      await res.body?.cancel();
    }
  });

  it("nosniff and no-store on the SSE stream (200), its 204 and its JSON errors, at the public port and the service", async () => {
    const publisher = new EventPublisher(bus, await createTask(env.baseUrl, bob.key));
    for (const base of [env.baseUrl, `${env.service("stream").url}/api/v1`]) {
      const live = await fetch(sseUrl(base, { workflow_id: publisher.taskId }), { headers: as(bob) });
      expect(live.status).toBe(200);
      expect(live.headers.get("content-type")).toMatch(/^text\/event-stream/);
      expectNosniffNoStore(live.headers, `SSE 200 at ${base}`);
      await live.body?.cancel();
      const refusals: [string, Record<string, string>, number][] = [
        [`${base}/stream/sse`, as(bob), 400],
        [sseUrl(base, { workflow_id: publisher.taskId }), {}, 401],
        [sseUrl(base, { workflow_id: "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d" }), as(bob), 404],
        [sseUrl(base, { workflow_id: publisher.taskId }), as(alice), 404],
      ];
      for (const [url, headers, status] of refusals) {
        const res = await fetch(url, { headers });
        expect(res.status, url).toBe(status);
        expect(await res.json()).toEqual({ error: expect.any(String) });
        expectNosniffNoStore(res.headers, `SSE ${status} at ${url}`);
      }
    }
    await publisher.emit(1, { last: true });
    const ended = await fetch(sseUrl(env.baseUrl, { workflow_id: publisher.taskId }), {
      headers: { ...as(bob), "Last-Event-ID": "1" },
    });
    expect(ended.status).toBe(204);
    expectNosniffNoStore(ended.headers, "SSE 204");
  });

  it("nosniff and no-store on the WebSocket handshake's refusals, at the public port and the service", async () => {
    for (const base of [env.baseUrl, `${env.service("stream").url}/api/v1`]) {
      for (const [headers, status] of [
        [{}, 401],
        [as(bob), 404],
      ] as const) {
        const ws = new WsClient(wsUrl(base, { workflow_id: "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d" }), headers);
        await ws.closed;
        expect(ws.refusedStatus).toBe(status);
        expectNosniffNoStore(ws.refusedHeaders!, `WS ${status} at ${base}`);
      }
    }
    for (const port of [env.stack.router.port, env.service("stream").port!]) {
      const res = await raw(
        port,
        `GET /api/v1/stream/ws HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Version: 13\r\n\r\n`,
      );
      expect(res.status).toBe(400);
      expect(res.headers).toContain("x-content-type-options: nosniff");
      expect(res.headers).toContain("cache-control: no-store");
    }
  });
});

describe("STREAM_MAX_CONNECTIONS through the public port", () => {
  it("a stream over the instance's limit gets 503 JSON (SSE and WebSocket); a freed slot is usable again", async () => {
    const variant = await env.startVariant("stream", { STREAM_MAX_CONNECTIONS: "1" });
    const taskId = await createTask(env.baseUrl, bob.key);
    const holder = new SseClient(sseUrl(variant.baseUrl, { workflow_id: taskId }), as(bob));
    await holder.waitFor((c) => c.status === 200, 10_000, "the first stream");
    const over = await fetch(sseUrl(variant.baseUrl, { workflow_id: taskId }), { headers: as(bob) });
    expect(over.status).toBe(503);
    expect(await over.json()).toEqual({ error: "Too many streams on this instance" });
    expectNosniffNoStore(over.headers, "SSE 503");
    const ws = new WsClient(wsUrl(variant.baseUrl), as(bob));
    await ws.closed;
    expect(ws.refusedStatus).toBe(503);
    expect(JSON.parse(ws.refusedBody)).toEqual({ error: "Too many streams on this instance" });
    holder.close();
    // The slot is given back when the server sees the close: retry briefly.
    let status = 0;
    for (const end = Date.now() + 10_000; status !== 200 && Date.now() < end; ) {
      const again = await fetch(sseUrl(variant.baseUrl, { workflow_id: taskId }), { headers: as(bob) });
      status = again.status;
      await again.body?.cancel();
      if (status !== 200) await new Promise((r) => setTimeout(r, 50));
    }
    expect(status).toBe(200);
  }, 60_000);
});

/** host:port of every TCP socket process `pid` listens on (Linux /proc: its socket inodes in /proc/net/tcp{,6}). */
function listeningAddresses(pid: number): string[] {
  const inodes = new Set<string>();
  for (const fd of readdirSync(`/proc/${pid}/fd`)) {
    try {
      const m = /^socket:\[(\d+)\]$/.exec(readlinkSync(`/proc/${pid}/fd/${fd}`));
      if (m) inodes.add(m[1]!);
    } catch {
      // closed meanwhile
    }
  }
  const found: string[] = [];
  for (const table of ["/proc/net/tcp", "/proc/net/tcp6"]) {
    for (const line of readFileSync(table, "utf8").split("\n").slice(1)) {
      const cols = line.trim().split(/\s+/);
      // cols: sl local_address rem_address st … inode (10th); st 0A = LISTEN
      if (cols.length < 10 || cols[3] !== "0A" || !inodes.has(cols[9]!)) continue;
      const [hex, port] = cols[1]!.split(":");
      found.push(`${hostOf(hex!)}:${parseInt(port!, 16)}`);
    }
  }
  return found;
}

/** /proc/net/tcp's little-endian hex address as text (IPv4, or IPv6 with its v4-mapped and loopback forms). */
function hostOf(hex: string): string {
  const bytes = (h: string) => Buffer.from(h, "hex").reverse();
  if (hex.length === 8) return [...bytes(hex)].join(".");
  const words = [0, 8, 16, 24].map((i) => bytes(hex.slice(i, i + 8)).toString("hex"));
  const v6 = words.join("");
  if (v6 === "00000000000000000000000000000001") return "::1";
  if (v6 === "0".repeat(32)) return "::";
  if (v6.startsWith("00000000000000000000ffff")) return `::ffff:${[...Buffer.from(v6.slice(24), "hex")].join(".")}`;
  return v6;
}

describe("internal ports under npm start's stack (libs/devstack startStack)", () => {
  it("every service, gRPC and ops port listens on 127.0.0.1 only", () => {
    for (const service of env.stack.services) {
      const addresses = listeningAddresses(service.pid);
      // Each process has its service (HTTP or gRPC) port and its ops port at least.
      expect(addresses.length, `${service.name} listens`).toBeGreaterThanOrEqual(2);
      for (const address of addresses)
        expect(address, `${service.name}`).toMatch(/^(127\.0\.0\.1|::ffff:127\.0\.0\.1):\d+$/);
      if (service.port !== undefined) expect(addresses).toContain(`127.0.0.1:${service.port}`);
    }
  });
});
