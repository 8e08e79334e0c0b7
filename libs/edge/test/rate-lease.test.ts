import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createRedis, type Redis } from "@tog/redis";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import { createRateLimiter, type RateDecision, type RateLimiterOptions } from "../src/index.ts";
import { dropPrefix, sleep, testRedis } from "./edge-harness.ts";

// Leases (docs/decisions.md "Rate limits", libs/edge/src/rate-lease.ts) on the real Redis: how
// many commands reach it, what the headers say, and that instances sharing it never admit more
// than the limit.

const prefix = `${uniqueId("edge_lease")}:`;
const clients: Redis[] = [];
let raw: Redis;

beforeAll(() => {
  raw = createRedis({ url: testInfraConfig.TEST_REDIS_URL });
});

afterAll(async () => {
  await dropPrefix(raw, prefix);
  for (const c of [...clients, raw]) c.disconnect();
});

const caller = () => ({ userId: uniqueId("user"), via: "anonymous" as const });

/** One instance's limiter on its own Redis client, which counts the scripts it sends. */
function instance(options: Omit<RateLimiterOptions, "redis">) {
  const redis = testRedis(prefix);
  clients.push(redis);
  const counted = { scripts: 0 };
  const send = redis.sendCommand.bind(redis);
  redis.sendCommand = ((command: { name: string }, ...rest: unknown[]) => {
    if (command.name === "evalsha" || command.name === "eval") counted.scripts += 1;
    return (send as (...a: unknown[]) => unknown)(command, ...rest);
  }) as typeof redis.sendCommand;
  const decide = createRateLimiter({ maxLease: 64, ...options, redis }).forRoute();
  return { decide, counted };
}

/** An instance whose Redis already knows the limiter's script (the first use may send it twice). */
async function warmInstance(options: Omit<RateLimiterOptions, "redis">) {
  const warm = instance(options);
  await warm.decide(caller());
  warm.counted.scripts = 0;
  return warm;
}

const minuteKey = (userId: string) => `${prefix}rl:m:default:u:${userId}`;

describe("rate-limit leases", () => {
  it("count a high limit in leases: a few round trips, the exact Remaining on one instance", async () => {
    const { decide, counted } = instance({ rpm: 100_000, burst: 100_000 });
    const who = caller();
    const remaining: number[] = [];
    for (let i = 0; i < 300; i++) remaining.push((await decide(who))!.remaining);
    expect(remaining).toEqual(Array.from({ length: 300 }, (_, i) => 100_000 - 1 - i));
    // Without leases: 600 scripts (a minute and a burst point per request).
    expect(counted.scripts).toBeLessThan(60);
    // Redis counted every point handed out, and the current lease's unused ones (≤ 64).
    const inRedis = Number(await raw.get(minuteKey(who.userId)));
    expect(inRedis).toBeGreaterThanOrEqual(300);
    expect(inRedis).toBeLessThanOrEqual(364);
  });

  it("hand a lease being taken to the requests that arrive meanwhile, one point each", async () => {
    const { decide, counted } = instance({ rpm: 100_000, burst: 100_000 });
    const who = caller();
    const decisions = await Promise.all(Array.from({ length: 200 }, () => decide(who)));
    expect(decisions.every((d) => d!.retryAfter === undefined)).toBe(true);
    const remaining = decisions.map((d) => d!.remaining).sort((a, b) => b - a);
    expect(remaining).toEqual(Array.from({ length: 200 }, (_, i) => 100_000 - 1 - i));
    expect(counted.scripts).toBeLessThan(60);
  });

  it("leave limits under 200 per window exact: one point per request in Redis", async () => {
    const { decide, counted } = await warmInstance({ rpm: 150, burst: 150 });
    const who = caller();
    for (let i = 0; i < 20; i++) await decide(who);
    expect(counted.scripts).toBe(40);
    expect(Number(await raw.get(minuteKey(who.userId)))).toBe(20);
  });

  it("with RATE_LIMIT_LEASE_MAX=1, count each request in Redis whatever the limit", async () => {
    const { decide, counted } = await warmInstance({ rpm: 100_000, burst: 100_000, maxLease: 1 });
    const who = caller();
    for (let i = 0; i < 20; i++) await decide(who);
    expect(counted.scripts).toBe(40);
  });

  it("never admit more than the limit across two instances, and waste at most a lease each", async () => {
    // 1,000 a minute: leases of at most 10 points (1 %).
    const one = instance({ rpm: 1_000, burst: 100_000 });
    const two = instance({ rpm: 1_000, burst: 100_000 });
    const who = caller();
    const decisions: (RateDecision | undefined)[] = [];
    for (let i = 0; i < 600; i++) decisions.push(...(await Promise.all([one.decide(who), two.decide(who)])));
    const admitted = decisions.filter((d) => d!.retryAfter === undefined).length;
    expect(admitted).toBeLessThanOrEqual(1_000);
    expect(admitted).toBeGreaterThanOrEqual(1_000 - 2 * 10);
    const refused = decisions.filter((d) => d!.retryAfter !== undefined);
    expect(refused.every((d) => d!.remaining === 0 && d!.retryAfter! >= 1)).toBe(true);
  });

  it("give a refused lease back and ask for one point: the counter holds no point nobody used", async () => {
    const a = instance({ rpm: 400, burst: 100_000 });
    const b = instance({ rpm: 400, burst: 100_000 });
    const who = caller();
    // A takes leases of 1 and 2 points (3 in Redis) and uses them up.
    for (let i = 0; i < 3; i++) expect((await a.decide(who))!.retryAfter).toBeUndefined();
    // B takes the rest; near the limit its leases shrink to single points, so it uses every one.
    let admittedB = 0;
    for (let i = 0; i < 397; i++) if ((await b.decide(who))!.retryAfter === undefined) admittedB += 1;
    expect(admittedB).toBe(397);
    expect(Number(await raw.get(minuteKey(who.userId)))).toBe(400);
    // A believes 397 are left and asks for a lease of 4: refused, given back, one point refused.
    const refused = await a.decide(who);
    expect(refused).toMatchObject({ remaining: 0 });
    expect(refused!.retryAfter).toBeGreaterThanOrEqual(1);
    expect(Number(await raw.get(minuteKey(who.userId)))).toBe(401);
  });

  it("keep counting, per instance and in leases, while Redis is down", async () => {
    const dead = createRedis({ url: "redis://127.0.0.1:1", keyPrefix: prefix });
    dead.on("error", () => {});
    clients.push(dead);
    // 300 a minute: leases of at most 3 points, from the in-process stand-in.
    const decide = createRateLimiter({
      redis: dead,
      rpm: 300,
      burst: 100_000,
      redisTimeoutMs: 50,
      maxLease: 64,
    }).forRoute();
    const who = caller();
    const decisions: (RateDecision | undefined)[] = [];
    for (let i = 0; i < 310; i++) decisions.push(await decide(who));
    const admitted = decisions.filter((d) => d!.retryAfter === undefined);
    expect(admitted.length).toBeLessThanOrEqual(300);
    expect(admitted.length).toBeGreaterThanOrEqual(297);
    expect(admitted.slice(0, 5).map((d) => d!.remaining)).toEqual([299, 298, 297, 296, 295]);
  });

  it("start over in a new window: refused in one second, admitted in the next", async () => {
    // 300 a second: leases of at most 3 points.
    const { decide } = instance({ rpm: 100_000, burst: 300 });
    const who = caller();
    let last: RateDecision | undefined;
    for (let i = 0; i < 2_000; i++) {
      last = await decide(who);
      if (last!.retryAfter !== undefined) break;
    }
    expect(last!.retryAfter).toBe(1);
    await sleep(1_100);
    expect((await decide(who))!.retryAfter).toBeUndefined();
  });
});
