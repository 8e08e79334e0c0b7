// Rate-limit headers on authenticated responses and the 429 (docs/api.md "Rate limits", "Errors").
// The gateway runs with RATE_LIMIT_RPM=5 (a high burst, so only the minute limit counts); a
// second gateway with RATE_LIMIT_BURST=3 checks the per-second limit.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  gatewayOperations,
  request,
  startE2eEnvironment,
  type E2eEnvironment,
  type JsonResponse,
} from "@tog/tests-e2e";
import { call, ISSUE_TOKEN, LIST_TASKS, missingRouteNote, PROTECTED_CALLS } from "./routes.ts";

const RPM = 5;
const BURST = 3;
let env: E2eEnvironment;
let ops: Set<string>;
let burstBaseUrl: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0" },
    services: { gateway: { RATE_LIMIT_RPM: String(RPM), RATE_LIMIT_BURST: "1000" } },
  });
  ops = await gatewayOperations(env.baseUrl);
  burstBaseUrl = (
    await env.startVariant("gateway", {
      GATEWAY_SKIP_AUTH: "0",
      RATE_LIMIT_RPM: "1000",
      RATE_LIMIT_BURST: String(BURST),
    })
  ).baseUrl;
});
afterAll(async () => {
  await env?.close();
});

function intHeader(res: { headers: Headers }, name: string): number {
  const v = res.headers.get(name);
  expect(v, name).toMatch(/^\d+$/);
  return Number(v);
}

function expect429(res: JsonResponse<unknown>): void {
  expect(res.status).toBe(429);
  const retryAfter = intHeader(res, "retry-after");
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
  expect(res.headers.get("x-ratelimit-remaining")).toBe("0");
  intHeader(res, "x-ratelimit-limit");
  expect(intHeader(res, "x-ratelimit-reset")).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000));
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.body).toEqual({ error: "Rate limit exceeded", retry_after: retryAfter });
}

describe.each(PROTECTED_CALLS)("rate-limit headers on $op", (c) => {
  it("X-RateLimit-Limit, -Remaining (counting down) and -Reset (Unix seconds)", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const { key } = await env.createApiKey({ name: "e2e headers" });
    const remaining: number[] = [];
    for (let i = 0; i < 2; i++) {
      const res = await call(env.baseUrl, c, { "X-API-Key": key });
      expect(res.status, res.text).toBe(c.ok);
      const limit = intHeader(res, "x-ratelimit-limit");
      // the task list has its own, higher limit (docs/api.md "Rate limits": 100 per minute)
      expect(limit).toBe(c === LIST_TASKS ? 100 : RPM);
      remaining.push(intHeader(res, "x-ratelimit-remaining"));
      expect(remaining.at(-1)).toBe(limit - 1 - i);
      const reset = intHeader(res, "x-ratelimit-reset");
      const now = Math.floor(Date.now() / 1000);
      expect(reset).toBeGreaterThanOrEqual(now);
      expect(reset).toBeLessThanOrEqual(now + 61);
    }
  });
});

describe("429 Too Many Requests", () => {
  it(`over RATE_LIMIT_RPM (${RPM}/min) on ${ISSUE_TOKEN.op}`, async () => {
    expect(ops.has(ISSUE_TOKEN.op), missingRouteNote(ISSUE_TOKEN.op)).toBe(true);
    const { key } = await env.createApiKey({ name: "e2e minute" });
    for (let i = 0; i < RPM; i++) {
      const ok = await call(env.baseUrl, ISSUE_TOKEN, { "X-API-Key": key });
      expect(ok.status, ok.text).toBe(ISSUE_TOKEN.ok);
    }
    const limited = await call(env.baseUrl, ISSUE_TOKEN, { "X-API-Key": key });
    expect429(limited);
    expect(limited.headers.get("x-ratelimit-limit")).toBe(String(RPM));
  });

  it.for(PROTECTED_CALLS)(`over RATE_LIMIT_BURST (${BURST}/s) on $op`, async (c) => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const { key } = await env.createApiKey({ name: "e2e burst" });
    // 3 per second allowed; 10 at once cannot all fit into two one-second windows
    const results = await Promise.all(Array.from({ length: 10 }, () => call(burstBaseUrl, c, { "X-API-Key": key })));
    const limited = results.filter((r) => r.status === 429);
    expect(results.filter((r) => r.status === c.ok).length).toBeLessThanOrEqual(2 * BURST);
    expect(limited.length).toBeGreaterThan(0);
    for (const res of limited) expect429(res);
  });

  it("limits are per key: another key is not affected", async () => {
    const c = PROTECTED_CALLS.find((p) => ops.has(p.op));
    expect(c, "no authenticated route exists").toBeDefined();
    const a = await env.createApiKey({ name: "e2e noisy" });
    const b = await env.createApiKey({ name: "e2e quiet" });
    const noisy = await Promise.all(Array.from({ length: 8 }, () => call(burstBaseUrl, c!, { "X-API-Key": a.key })));
    expect(noisy.some((r) => r.status === 429)).toBe(true);
    const res = await call(burstBaseUrl, c!, { "X-API-Key": b.key });
    expect(res.status).toBe(c!.ok);
  });

  it("unauthenticated probes carry no rate-limit headers", async () => {
    const res = await request(`${env.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-ratelimit-limit")).toBeNull();
  });
});
