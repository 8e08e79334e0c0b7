// GATEWAY_SKIP_AUTH=0: every cause of a 401 and its exact body, keys made and revoked with
// the keys CLI as an operator would, and the routes that need no key.
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayOperations, request, startE2eEnvironment, unknownApiKey, type E2eEnvironment } from "@tog/tests-e2e";
import { call, missingRouteNote, PROTECTED_CALLS, type ProtectedCall } from "./routes.ts";

let env: E2eEnvironment;
let ops: Set<string>;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0" },
    // no in-process key cache, so a revocation is seen by the very next request
    services: { gateway: { AUTH_KEY_CACHE_MS: "0" } },
  });
  ops = await gatewayOperations(env.baseUrl);
});
afterAll(async () => {
  await env?.close();
});

async function expectUnauthorized(c: ProtectedCall, headers: Record<string, string> = {}, query = ""): Promise<void> {
  const res = await call(env.baseUrl, c, headers, query);
  expect(res.status).toBe(401);
  expect(res.headers.get("content-type")).toMatch(/^application\/json/);
  expect(res.text).toBe('{"error":"Unauthorized"}');
}

describe("routes without authentication", () => {
  it.each(["/health", "/readiness", "/openapi.json"])("GET %s answers 200 without a key", async (path) => {
    const res = await request(`${env.baseUrl}${path}`);
    expect(res.status).toBe(200);
  });

  it("the model catalog answers without a key", async () => {
    if (!env.catalogUrl) throw new Error("the model catalog service does not run");
    expect((await request(env.catalogUrl)).status).toBe(200);
  });
});

describe.each(PROTECTED_CALLS)("401 Unauthorized on $op", (c) => {
  it("a valid key from the keys CLI is accepted", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const { key } = await env.createApiKey({ name: "e2e valid" });
    const res = await call(env.baseUrl, c, { "X-API-Key": key });
    expect(res.status, res.text).toBe(c.ok);
  });

  it("missing key", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    await expectUnauthorized(c);
  });

  it.for([
    ["no sk_ prefix", `pk_${"a".repeat(64)}`],
    ["too short", "sk_1234"],
    ["not hex", `sk_${"z".repeat(64)}`],
    ["empty", ""],
  ] as const)("malformed key (%s)", async ([, value]) => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    await expectUnauthorized(c, { "X-API-Key": value });
  });

  it("unknown key of the right format", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    await expectUnauthorized(c, { "X-API-Key": unknownApiKey() });
  });

  it("revoked key (worked before `keys revoke`, refused after)", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const created = await env.createApiKey({ name: "e2e revoke" });
    expect((await call(env.baseUrl, c, { "X-API-Key": created.key })).status).toBe(c.ok);
    await env.revokeApiKey(created.id);
    await expectUnauthorized(c, { "X-API-Key": created.key });
  });

  it("expired key (`keys create --expires-in 1s`)", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const created = await env.createApiKey({ name: "e2e expiring", expiresIn: "1s" });
    expect(created.expires_at).not.toBeNull();
    const wait = Date.parse(created.expires_at!) - Date.now() + 250;
    if (wait > 0) await sleep(wait);
    await expectUnauthorized(c, { "X-API-Key": created.key });
  });

  it("a valid key in the query string is refused, with or without the header", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const { key } = await env.createApiKey({ name: "e2e query" });
    await expectUnauthorized(c, {}, `?api_key=${key}`);
    await expectUnauthorized(c, { "X-API-Key": key }, `?api_key=${key}`);
    await expectUnauthorized(c, {}, `?x-api-key=${key}`);
  });

  it("a key sent as a bearer token on a non-streaming route is refused", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const { key } = await env.createApiKey({ name: "e2e bearer" });
    await expectUnauthorized(c, { Authorization: `Bearer ${key}` });
  });
});
