import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, type Redis } from "@tog/redis";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import { createRateLimiter, rateLimitHeaders, type RateLimiterOptions } from "../src/index.ts";
import {
  captureLogs,
  dropPrefix,
  sleep,
  startTestApp,
  testPrincipal,
  testRedis,
  type TestApp,
} from "./edge-harness.ts";

const prefix = `${uniqueId("edge_rl")}:`;
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

/** An app with GET /default (the default limit) and GET /tasks (its own 2×rpm limit). */
async function limitedApp(options: Omit<RateLimiterOptions, "redis"> & { redis?: Redis }) {
  const redis = options.redis ?? testRedis(prefix);
  clients.push(redis);
  const limits = createRateLimiter({ ...options, redis });
  const app = await startTestApp({
    routes: (r) => {
      r.get("/default", testPrincipal, limits.middleware(), (_req, res) => void res.json({ ok: true }));
      r.get("/other", testPrincipal, limits.middleware(), (_req, res) => void res.json({ ok: true }));
      r.get(
        "/tasks",
        testPrincipal,
        limits.middleware({ rpm: options.rpm * 2 }),
        (_req, res) => void res.json({ ok: true }),
      );
    },
  });
  apps.push(app);
  return app;
}

const get = (app: TestApp, path: string, caller: Record<string, string>) =>
  fetch(`${app.url}${path}`, { headers: caller });
const asKey = () => ({ "x-test-key": uniqueId("key") });

describe("rate limiting", () => {
  it("puts X-RateLimit-* on every authenticated response and counts down", async () => {
    const app = await limitedApp({ rpm: 5, burst: 100 });
    const caller = asKey();
    const before = Math.floor(Date.now() / 1000);
    for (let i = 1; i <= 3; i++) {
      const res = await get(app, "/default", caller);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBe("5");
      expect(res.headers.get("x-ratelimit-remaining")).toBe(String(5 - i));
      const reset = Number(res.headers.get("x-ratelimit-reset"));
      expect(Number.isInteger(reset)).toBe(true);
      expect(reset).toBeGreaterThanOrEqual(before + 59);
      expect(reset).toBeLessThanOrEqual(Math.ceil(Date.now() / 1000) + 60);
    }
  });

  it("answers 429 with the contract body, Retry-After and Remaining 0 over the minute limit", async () => {
    const app = await limitedApp({ rpm: 3, burst: 100 });
    const caller = asKey();
    for (let i = 0; i < 3; i++) expect((await get(app, "/default", caller)).status).toBe(200);
    const res = await get(app, "/default", caller);
    expect(res.status).toBe(429);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { error: string; retry_after: number };
    expect(Object.keys(body).sort()).toEqual(["error", "retry_after"]);
    expect(body.error).toBe("Rate limit exceeded");
    expect(Number.isInteger(body.retry_after)).toBe(true);
    expect(body.retry_after).toBeGreaterThanOrEqual(58);
    expect(body.retry_after).toBeLessThanOrEqual(60);
    expect(res.headers.get("retry-after")).toBe(String(body.retry_after));
    expect(res.headers.get("x-ratelimit-limit")).toBe("3");
    expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
    const reset = Number(res.headers.get("x-ratelimit-reset"));
    expect(Math.abs(reset - (Math.ceil(Date.now() / 1000) + body.retry_after))).toBeLessThanOrEqual(1);
  });

  it("keeps callers apart: another API key, or another user when no key is used", async () => {
    const app = await limitedApp({ rpm: 1, burst: 100 });
    const a = asKey();
    expect((await get(app, "/default", a)).status).toBe(200);
    expect((await get(app, "/default", a)).status).toBe(429);
    expect((await get(app, "/default", asKey())).status).toBe(200);
    const userA = { "x-test-anon": "1", "x-test-user": uniqueId("u") };
    expect((await get(app, "/default", userA)).status).toBe(200);
    expect((await get(app, "/default", userA)).status).toBe(429);
    expect((await get(app, "/default", { "x-test-anon": "1", "x-test-user": uniqueId("u") })).status).toBe(200);
  });

  it("enforces the per-second burst limit, then lets requests through in the next second", async () => {
    const app = await limitedApp({ rpm: 100, burst: 3 });
    const caller = asKey();
    const results = await Promise.all(Array.from({ length: 5 }, () => get(app, "/default", caller)));
    const statuses = results.map((r) => r.status).sort();
    expect(statuses).toEqual([200, 200, 200, 429, 429]);
    const limited = results.find((r) => r.status === 429)!;
    expect(await limited.json()).toEqual({ error: "Rate limit exceeded", retry_after: 1 });
    expect(limited.headers.get("retry-after")).toBe("1");
    expect(limited.headers.get("x-ratelimit-limit")).toBe("100");
    expect(limited.headers.get("x-ratelimit-remaining")).toBe("0");
    await sleep(1_100);
    const after = await get(app, "/default", caller);
    expect(after.status).toBe(200);
    // Rejected requests counted too: 5 + 1 of 100.
    expect(after.headers.get("x-ratelimit-remaining")).toBe("94");
  });

  it("shares the burst counter across routes", async () => {
    const app = await limitedApp({ rpm: 100, burst: 2 });
    const caller = asKey();
    expect((await get(app, "/default", caller)).status).toBe(200);
    expect((await get(app, "/tasks", caller)).status).toBe(200);
    expect((await get(app, "/other", caller)).status).toBe(429);
  });

  it("applies a route's own minute limit in its own bucket; default routes share one", async () => {
    const app = await limitedApp({ rpm: 2, burst: 100 });
    const caller = asKey();
    const t = await get(app, "/tasks", caller);
    expect(t.headers.get("x-ratelimit-limit")).toBe("4");
    expect(t.headers.get("x-ratelimit-remaining")).toBe("3");
    expect((await get(app, "/default", caller)).headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await get(app, "/other", caller)).headers.get("x-ratelimit-remaining")).toBe("0");
    const blocked = await get(app, "/default", caller);
    expect(blocked.status).toBe(429);
    expect(blocked.headers.get("x-ratelimit-limit")).toBe("2");
    // The task list still has its budget.
    for (const left of ["2", "1", "0"]) {
      const res = await get(app, "/tasks", caller);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-remaining")).toBe(left);
    }
    expect((await get(app, "/tasks", caller)).status).toBe(429);
  });

  it("counts across two gateway instances sharing one Redis", async () => {
    const one = await limitedApp({ rpm: 4, burst: 100 });
    const two = await limitedApp({ rpm: 4, burst: 100 });
    const caller = asKey();
    expect((await get(one, "/default", caller)).headers.get("x-ratelimit-remaining")).toBe("3");
    expect((await get(two, "/default", caller)).headers.get("x-ratelimit-remaining")).toBe("2");
    expect((await get(one, "/default", caller)).headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await get(two, "/default", caller)).headers.get("x-ratelimit-remaining")).toBe("0");
    expect((await get(one, "/default", caller)).status).toBe(429);
    expect((await get(two, "/default", caller)).status).toBe(429);
  });

  it("stores its counters under the Redis client's key prefix", async () => {
    const app = await limitedApp({ rpm: 10, burst: 10 });
    const key = uniqueId("key");
    await get(app, "/tasks", { "x-test-key": key });
    const keys = (await raw.keys(`*${key}*`)).sort();
    expect(keys).toEqual([`${prefix}rl:m:rpm20:k:${key}`, `${prefix}rl:s:k:${key}`]);
    expect(await raw.pttl(keys[0]!)).toBeGreaterThan(55_000);
  });

  it("falls back to a per-instance limit with a logged warning while Redis is down", async () => {
    const { logger, lines } = captureLogs();
    const dead = createRedis({ url: "redis://127.0.0.1:1", keyPrefix: prefix });
    dead.on("error", () => {});
    const app = await limitedApp({ rpm: 2, burst: 100, redis: dead, logger });
    const caller = asKey();
    const first = await get(app, "/default", caller);
    expect(first.status).toBe(200);
    expect(first.headers.get("x-ratelimit-limit")).toBe("2");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("1");
    expect((await get(app, "/default", caller)).status).toBe(200);
    const third = await get(app, "/default", caller);
    expect(third.status).toBe(429);
    expect(third.headers.get("retry-after")).toMatch(/^\d+$/);
    const warnings = lines.filter((l) => l.level === "warn" && String(l.msg).includes("Redis unavailable"));
    expect(warnings).toHaveLength(1);
  });

  it("decides outside express too (forRoute), in the counters of its own key prefix", async () => {
    const redis = testRedis(prefix);
    clients.push(redis);
    const streams = createRateLimiter({ redis, rpm: 2, burst: 100, keyPrefix: "rl:stream" });
    const open = streams.forRoute();
    const principal = { userId: uniqueId("user"), via: "anonymous" as const };
    const first = await open(principal);
    expect(first).toMatchObject({ limit: 2, remaining: 1 });
    expect(first!.retryAfter).toBeUndefined();
    expect(first!.reset).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 59);
    expect(rateLimitHeaders(first!)).toEqual([
      ["X-RateLimit-Limit", "2"],
      ["X-RateLimit-Remaining", "1"],
      ["X-RateLimit-Reset", String(first!.reset)],
    ]);
    expect(await open(principal)).toMatchObject({ remaining: 0 });
    const refused = await open(principal);
    expect(refused).toMatchObject({ limit: 2, remaining: 0 });
    expect(refused!.retryAfter).toBeGreaterThanOrEqual(58);
    expect(Math.abs(refused!.reset - (Math.ceil(Date.now() / 1000) + refused!.retryAfter!))).toBeLessThanOrEqual(1);
    expect((await raw.keys(`*${principal.userId}*`)).sort()).toEqual([
      `${prefix}rl:stream:m:default:u:${principal.userId}`,
      `${prefix}rl:stream:s:u:${principal.userId}`,
    ]);
    // Another limiter's (the gateway's) counters are apart.
    const api = createRateLimiter({ redis, rpm: 2, burst: 100 }).forRoute();
    expect(await api(principal)).toMatchObject({ remaining: 1 });
  });

  it("does not limit or add headers on a route without a principal", async () => {
    const redis = testRedis(prefix);
    clients.push(redis);
    const limits = createRateLimiter({ redis, rpm: 1, burst: 1 });
    const app = await startTestApp({ routes: (r) => r.get("/open", limits.middleware(), (_q, s) => void s.json({})) });
    apps.push(app);
    for (let i = 0; i < 3; i++) {
      const res = await fetch(`${app.url}/open`);
      expect(res.status).toBe(200);
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });
});
