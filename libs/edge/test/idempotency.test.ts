import { createHash, randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { createRedis, type Redis } from "@tog/redis";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import {
  createIdempotency,
  createIdempotencyIdentity,
  createRateLimiter,
  type IdempotencyOptions,
} from "../src/index.ts";
import { dropPrefix, sleep, startTestApp, testPrincipal, testRedis, type TestApp } from "./edge-harness.ts";

const prefix = `${uniqueId("edge_idem")}:`;
const clients: Redis[] = [];
const apps: TestApp[] = [];
let raw: Redis;

beforeAll(() => {
  raw = createRedis({ url: testInfraConfig.TEST_REDIS_URL });
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await dropPrefix(raw, prefix);
  for (const c of [...clients, raw]) c.disconnect();
});

interface Handler {
  calls: number;
  /** What the nth call (1-based) does; default: 200 with a fresh task id. */
  behave?: (n: number, body: unknown) => Promise<{ status: number; body: unknown } | "throw" | "stream">;
}

/** POST /tasks and POST /other behind the idempotency middleware, counting executions. */
async function idemApp(handler: Handler, options: Partial<IdempotencyOptions> = {}, redis?: Redis) {
  const client = redis ?? testRedis(prefix);
  clients.push(client);
  const idem = createIdempotency({ redis: client, ttlSeconds: 60, ...options });
  const app = await startTestApp({
    routes: (r) => {
      for (const path of ["/tasks", "/other"]) {
        r.post(path, testPrincipal, idem, async (req, res) => {
          const n = ++handler.calls;
          const outcome = handler.behave
            ? await handler.behave(n, req.body)
            : { status: 200, body: { task_id: randomUUID(), n } };
          if (outcome === "throw") throw new ValidationError(`failure ${n}`);
          if (outcome === "stream") {
            res.write(`chunk ${n}`);
            res.end();
            return;
          }
          const taskId = (outcome.body as { task_id?: string }).task_id ?? "none";
          res.setHeader("X-Workflow-ID", taskId);
          res.setHeader("X-Session-ID", `session-${n}`);
          res.setHeader("X-Not-Replayed", "x");
          if (outcome.status === 201) res.location(`/tasks/${taskId}`);
          res.status(outcome.status).json(outcome.body);
        });
      }
    },
  });
  apps.push(app);
  return app;
}

function post(
  app: TestApp,
  key: string | undefined,
  body: unknown = { query: "q" },
  extra: Record<string, string> = {},
  path = "/tasks",
) {
  return fetch(`${app.url}${path}`, {
    method: "POST",
    headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }), ...extra },
    body: JSON.stringify(body),
  });
}

describe("idempotency", () => {
  it("replays the first 2xx response: same status, body and headers, plus the two idempotency headers", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h);
    const key = randomUUID();
    const first = await post(app, key);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-idempotency-cached")).toBeNull();
    const firstBody = await first.text();
    const again = await post(app, key);
    expect(again.status).toBe(200);
    expect(await again.text()).toBe(firstBody);
    expect(again.headers.get("x-idempotency-cached")).toBe("true");
    expect(again.headers.get("x-idempotency-key")).toBe(key);
    expect(again.headers.get("content-type")).toBe(first.headers.get("content-type"));
    expect(again.headers.get("x-workflow-id")).toBe(first.headers.get("x-workflow-id"));
    expect(again.headers.get("x-session-id")).toBe("session-1");
    expect(again.headers.get("x-not-replayed")).toBeNull();
    expect(h.calls).toBe(1);
  });

  it("replays a 201 with its Location header", async () => {
    const h: Handler = { calls: 0, behave: async (n) => ({ status: 201, body: { task_id: `t-${n}` } }) };
    const app = await idemApp(h);
    const key = uniqueId("k");
    const first = await post(app, key);
    expect(first.status).toBe(201);
    const again = await post(app, key);
    expect(again.status).toBe(201);
    expect(await again.json()).toEqual({ task_id: "t-1" });
    expect(again.headers.get("location")).toBe("/tasks/t-1");
    expect(h.calls).toBe(1);
  });

  it("treats a changed body, another path or another user as a new request", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h);
    const key = uniqueId("k");
    await post(app, key, { query: "a" });
    expect((await post(app, key, { query: "b" })).headers.get("x-idempotency-cached")).toBeNull();
    expect((await post(app, key, { query: "a" }, {}, "/other")).headers.get("x-idempotency-cached")).toBeNull();
    expect(
      (await post(app, key, { query: "a" }, { "x-test-user": "user-2" })).headers.get("x-idempotency-cached"),
    ).toBeNull();
    expect(h.calls).toBe(4);
    // Each of them is now cached on its own.
    expect((await post(app, key, { query: "b" })).headers.get("x-idempotency-cached")).toBe("true");
    expect(
      (await post(app, key, { query: "a" }, { "x-test-user": "user-2" })).headers.get("x-idempotency-cached"),
    ).toBe("true");
    expect(h.calls).toBe(4);
  });

  it("ignores whitespace differences in the JSON body", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h);
    const key = uniqueId("k");
    const send = (text: string) =>
      fetch(`${app.url}/tasks`, {
        method: "POST",
        headers: { "content-type": "application/json", "idempotency-key": key },
        body: text,
      });
    await send('{"query":"a"}');
    expect((await send('{ "query" : "a" }\n')).headers.get("x-idempotency-cached")).toBe("true");
    expect(h.calls).toBe(1);
  });

  it("leaves the user out of the identity when auth is off (anonymous)", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h);
    const key = uniqueId("k");
    const first = await post(app, key, { query: "q" }, { "x-test-anon": "1", "x-test-user": "u-a" });
    const again = await post(app, key, { query: "q" }, { "x-test-anon": "1", "x-test-user": "u-b" });
    expect(again.headers.get("x-idempotency-cached")).toBe("true");
    expect(await again.text()).toBe(await first.text());
    expect(h.calls).toBe(1);
    // The documented identity: sha256(key \0 "" \0 path \0 body).
    const hash = createHash("sha256")
      .update(`${key}\0\0/tasks\0${JSON.stringify({ query: "q" })}`)
      .digest("hex");
    expect(await raw.exists(`${prefix}idem:${hash}`)).toBe(1);
    expect(await raw.pttl(`${prefix}idem:${hash}`)).toBeGreaterThan(55_000);
  });

  it("does not cache non-2xx responses", async () => {
    const h: Handler = {
      calls: 0,
      behave: async (n) =>
        n === 1 ? { status: 400, body: { error: "nope" } } : n === 2 ? "throw" : { status: 200, body: { n } },
    };
    const app = await idemApp(h);
    const key = uniqueId("k");
    expect((await post(app, key)).status).toBe(400);
    const second = await post(app, key);
    expect(second.status).toBe(400);
    expect(await second.json()).toEqual({ error: "failure 2" });
    const third = await post(app, key);
    expect(third.status).toBe(200);
    expect(await third.json()).toEqual({ n: 3 });
    const fourth = await post(app, key);
    expect(fourth.headers.get("x-idempotency-cached")).toBe("true");
    expect(await fourth.json()).toEqual({ n: 3 });
    expect(h.calls).toBe(3);
  });

  it("runs the handler exactly once for 20 concurrent identical requests", async () => {
    const h: Handler = {
      calls: 0,
      behave: async (n) => {
        await sleep(300);
        return { status: 200, body: { task_id: randomUUID(), n } };
      },
    };
    const app = await idemApp(h);
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(app, key)));
    const bodies = await Promise.all(responses.map((r) => r.text()));
    expect(h.calls).toBe(1);
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    expect(new Set(bodies).size).toBe(1);
    expect(JSON.parse(bodies[0]!)).toMatchObject({ n: 1 });
    expect(responses.filter((r) => r.headers.get("x-idempotency-cached") === "true")).toHaveLength(19);
  });

  it("runs once across two gateway instances on the same Redis", async () => {
    const h: Handler = {
      calls: 0,
      behave: async (n) => {
        await sleep(200);
        return { status: 200, body: { n } };
      },
    };
    const one = await idemApp(h);
    const two = await idemApp(h);
    const key = randomUUID();
    const responses = await Promise.all(Array.from({ length: 10 }, (_, i) => post(i % 2 ? one : two, key)));
    expect(h.calls).toBe(1);
    expect(await Promise.all(responses.map((r) => r.json()))).toEqual(Array(10).fill({ n: 1 }));
  });

  it("lets a waiter run itself when the first request fails", async () => {
    const h: Handler = {
      calls: 0,
      behave: async (n) => {
        await sleep(200);
        return n === 1 ? { status: 503, body: { error: "busy" } } : { status: 200, body: { n } };
      },
    };
    const app = await idemApp(h);
    const key = uniqueId("k");
    const first = post(app, key);
    await sleep(50);
    const second = post(app, key);
    expect((await first).status).toBe(503);
    const s = await second;
    expect(s.status).toBe(200);
    expect(await s.json()).toEqual({ n: 2 });
    expect(s.headers.get("x-idempotency-cached")).toBeNull();
    expect(h.calls).toBe(2);
  });

  it("answers 409 when the first request is still running after the wait bound", async () => {
    const h: Handler = {
      calls: 0,
      behave: async (n) => {
        await sleep(800);
        return { status: 200, body: { n } };
      },
    };
    const app = await idemApp(h, { waitTimeoutMs: 250 });
    const key = uniqueId("k");
    const first = post(app, key);
    await sleep(50);
    const second = await post(app, key);
    expect(second.status).toBe(409);
    expect(await second.json()).toEqual({ error: "A request with this Idempotency-Key is already in progress" });
    expect((await first).status).toBe(200);
    expect(h.calls).toBe(1);
  });

  it("recovers when a lock holder crashed: the lock expires", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h, { waitTimeoutMs: 3_000 });
    const key = uniqueId("k");
    const body = { query: "q" };
    const hash = createHash("sha256")
      .update(`${key}\0user-1\0/tasks\0${JSON.stringify(body)}`)
      .digest("hex");
    // A holder that died mid-request: its lock stays until it expires.
    await raw.set(`${prefix}idem:${hash}:lock`, "dead-instance", "PX", 400);
    const started = Date.now();
    const res = await post(app, key, body);
    expect(res.status).toBe(200);
    expect(Date.now() - started).toBeGreaterThanOrEqual(350);
    expect(h.calls).toBe(1);
  });

  it("expires the cached response after the TTL", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h, { ttlSeconds: 1 });
    const key = uniqueId("k");
    await post(app, key);
    expect((await post(app, key)).headers.get("x-idempotency-cached")).toBe("true");
    await sleep(1_100);
    expect((await post(app, key)).headers.get("x-idempotency-cached")).toBeNull();
    expect(h.calls).toBe(2);
  });

  it("rejects an Idempotency-Key longer than 255 characters with 400", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h);
    const res = await post(app, "k".repeat(256));
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({ error: "Idempotency-Key must be 1 to 255 characters" });
    expect(h.calls).toBe(0);
    expect((await post(app, "k".repeat(255))).status).toBe(200);
  });

  it("runs every request without a key", async () => {
    const h: Handler = { calls: 0 };
    const app = await idemApp(h);
    await post(app, undefined);
    await post(app, undefined);
    expect(h.calls).toBe(2);
  });

  it("never caches a streamed response and frees the key", async () => {
    const h: Handler = { calls: 0, behave: async () => "stream" };
    const app = await idemApp(h);
    const key = uniqueId("k");
    expect(await (await post(app, key)).text()).toBe("chunk 1");
    const again = await post(app, key);
    expect(await again.text()).toBe("chunk 2");
    expect(again.headers.get("x-idempotency-cached")).toBeNull();
  });

  it("keeps rate-limit headers fresh on a replay", async () => {
    const redis = testRedis(prefix);
    clients.push(redis);
    const limits = createRateLimiter({ redis, rpm: 10, burst: 10 });
    const idem = createIdempotency({ redis, ttlSeconds: 60 });
    let calls = 0;
    const app = await startTestApp({
      routes: (r) => r.post("/tasks", testPrincipal, limits.middleware(), idem, (_q, s) => void s.json({ n: ++calls })),
    });
    apps.push(app);
    const key = uniqueId("k");
    const caller = { "x-test-key": uniqueId("key") };
    expect((await post(app, key, {}, caller)).headers.get("x-ratelimit-remaining")).toBe("9");
    const again = await post(app, key, {}, caller);
    expect(again.headers.get("x-idempotency-cached")).toBe("true");
    expect(again.headers.get("x-ratelimit-remaining")).toBe("8");
    expect(calls).toBe(1);
  });

  it("refuses keyed requests with 503 while Redis is down and serves unkeyed ones", async () => {
    const dead = createRedis({ url: "redis://127.0.0.1:1", keyPrefix: prefix });
    dead.on("error", () => {});
    const h: Handler = { calls: 0 };
    const app = await idemApp(h, {}, dead);
    const res = await post(app, uniqueId("k"));
    expect(res.status).toBe(503);
    expect(await res.json()).toEqual({ error: "Idempotency store unavailable" });
    expect(res.headers.get("retry-after")).toBe("1");
    expect((await post(app, undefined)).status).toBe(200);
    expect(h.calls).toBe(1);
  });
});

describe("identity only (task submit: the task row deduplicates)", () => {
  async function identityApp() {
    const seen: unknown[] = [];
    const app = await startTestApp({
      routes: (r) => {
        r.post("/tasks", testPrincipal, createIdempotencyIdentity({ ttlSeconds: 90 }), (req, res) => {
          seen.push(req.idempotency);
          res.json({ ok: true });
        });
      },
    });
    apps.push(app);
    return { app, seen };
  }

  it("gives the handler the same identity as the Redis-backed middleware, and runs every request", async () => {
    const { app, seen } = await identityApp();
    const post = (key: string | undefined, body: unknown) =>
      fetch(`${app.url}/tasks`, {
        method: "POST",
        headers: { "content-type": "application/json", ...(key === undefined ? {} : { "idempotency-key": key }) },
        body: JSON.stringify(body),
      });
    for (const res of [await post("k-1", { q: 1 }), await post("k-1", { q: 1 }), await post(undefined, { q: 1 })])
      expect(res.status).toBe(200);
    const expected = createHash("sha256")
      .update("k-1")
      .update("\0")
      .update("user-1")
      .update("\0")
      .update("/tasks")
      .update("\0")
      .update(JSON.stringify({ q: 1 }))
      .digest("hex");
    expect(seen).toEqual([{ keyHash: expected, ttlSeconds: 90 }, { keyHash: expected, ttlSeconds: 90 }, undefined]);
    const tooLong = await post("x".repeat(256), { q: 1 });
    expect(tooLong.status).toBe(400);
    expect(await tooLong.json()).toEqual({ error: "Idempotency-Key must be 1 to 255 characters" });
    expect(seen).toHaveLength(3);
  });
});
