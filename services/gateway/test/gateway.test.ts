import { afterAll, beforeAll, describe, expect, it } from "vitest";
import SwaggerParser from "@apidevtools/swagger-parser";
import { createLogger } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import { createRedis, type Redis } from "@tog/redis";
import {
  AccessTokens,
  ApiKeyRepository,
  createAuth,
  createIdempotency,
  createRateLimiter,
  startHttpServer,
  UserRepository,
  type StartedServer,
} from "@tog/edge";
import { createTestDatabase, testInfraConfig, uniqueId, type TestDatabase } from "@tog/testkit";
import { pingCheck, postgresCheck, redisCheck, type ReadinessCheck } from "@tog/ops";
import { createGatewayApp, GATEWAY_VERSION } from "../src/index.ts";
import { tokenRoutes } from "../src/token.routes.ts";
import { InMemoryOrchestrator } from "./support/in-memory-orchestrator.ts";

const logger = createLogger({ service: "gateway-test", level: "silent" });
const CLOSED_PORT_REDIS = "redis://127.0.0.1:1";

let database: TestDatabase;
let db: Db;
let redis: Redis;
let deadRedis: Redis;
const orchestrator = pingCheck("orchestrator", new InMemoryOrchestrator());
const servers: StartedServer[] = [];

const tokens = new AccessTokens({ secret: "x".repeat(32), ttlSeconds: 60 });

async function serve(checks: ReadinessCheck[], readinessTimeoutMs = 1_000) {
  const auth = createAuth({
    repository: new ApiKeyRepository({ db, cacheTtlMs: 0 }),
    tokens,
    skipAuth: false,
  });
  const { app, docs } = createGatewayApp({
    logger,
    version: GATEWAY_VERSION,
    auth,
    limits: createRateLimiter({ redis, rpm: 60, burst: 20 }),
    idempotency: createIdempotency({ redis, ttlSeconds: 60 }),
    tokens,
    modules: [tokenRoutes],
    cors: { mode: "development", allowedOrigins: [] },
    maxBodyBytes: 1_048_576,
    readinessChecks: checks,
    readinessTimeoutMs,
  });
  const server = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  servers.push(server);
  return { base: `http://127.0.0.1:${server.port}`, docs };
}

let base: string;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDbClient({ databaseUrl: database.url, poolMax: 2 });
  const prefix = `${uniqueId("gw")}:`;
  redis = createRedis({ url: testInfraConfig.TEST_REDIS_URL, keyPrefix: prefix });
  deadRedis = createRedis({ url: CLOSED_PORT_REDIS, keyPrefix: prefix });
  deadRedis.on("error", () => undefined);
  base = (await serve([postgresCheck(db), redisCheck(redis), orchestrator])).base;
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  redis?.disconnect();
  deadRedis?.disconnect();
  await db?.$disconnect();
  await database?.drop();
});

describe("GET /api/v1/health", () => {
  it("answers 200 healthy with version and time, without credentials", async () => {
    const before = Date.now();
    const res = await fetch(`${base}/api/v1/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const body = (await res.json()) as { status: string; version: string; time: string };
    expect(body).toEqual({ status: "healthy", version: GATEWAY_VERSION, time: expect.any(String) });
    expect(Date.parse(body.time)).toBeGreaterThanOrEqual(before - 1000);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
  });
});

describe("probes at the server root", () => {
  it("GET /health and GET /readiness answer like their /api/v1 forms", async () => {
    const health = await fetch(`${base}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as { status: string }).status).toBe("healthy");
    const ready = await fetch(`${base}/readiness`);
    expect([200, 503]).toContain(ready.status);
    expect(((await ready.json()) as { status: string }).status).toMatch(/^(ready|not ready)$/);
  });
});

describe("GET /api/v1/docs", () => {
  it("serves Swagger UI from the package itself (no CDN, no inline script)", async () => {
    const page = await fetch(`${base}/api/v1/docs`);
    expect(page.status).toBe(200);
    expect(page.headers.get("content-type")).toMatch(/^text\/html/);
    // Its own policy: the API's `default-src 'none'` would block every file of the page.
    expect(page.headers.get("content-security-policy")).toMatch(/script-src 'self';/);
    const html = await page.text();
    const sources = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!);
    expect(
      sources.every((u) => u.startsWith("/api/v1/docs/")),
      sources.join(", "),
    ).toBe(true);
    expect(html).not.toMatch(/<script>(?!<\/script>)/);
    for (const asset of sources) {
      const res = await fetch(`${base}${asset}`);
      expect(res.status, asset).toBe(200);
      expect(res.headers.get("cache-control"), asset).toBe(
        asset.endsWith("init.js") ? "no-cache" : "public, max-age=86400",
      );
      expect((await res.arrayBuffer()).byteLength, asset).toBeGreaterThan(100);
    }
    const init = await (await fetch(`${base}/api/v1/docs/init.js`)).text();
    expect(init).toContain('url: "/api/v1/openapi.json"');
    expect(init).toContain("validatorUrl: null");
  });
});

describe("GET /api/v1/readiness", () => {
  it("answers 200 when PostgreSQL, Redis and the orchestrator answer", async () => {
    const res = await fetch(`${base}/api/v1/readiness`);
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ status: "ready", checks: { postgres: "ok", redis: "ok", orchestrator: "ok" } });
  });

  it("answers 503 naming the failed dependency when Redis is on a closed port", async () => {
    const { base: b } = await serve([postgresCheck(db), redisCheck(deadRedis), orchestrator], 800);
    const started = Date.now();
    const res = await fetch(`${b}/api/v1/readiness`);
    expect(Date.now() - started).toBeLessThan(3_000);
    expect(res.status).toBe(503);
    const body = (await res.json()) as { status: string; error: string; checks: Record<string, string> };
    expect(body).toEqual({
      status: "not ready",
      error: "Not ready: redis",
      checks: {
        postgres: "ok",
        redis: expect.stringMatching(/^(unavailable|timed out after 800 ms)$/),
        orchestrator: "ok",
      },
    });
  });

  it("answers 503 when PostgreSQL is on a closed port", async () => {
    const deadDb = createDbClient({ databaseUrl: "postgresql://postgres@127.0.0.1:1/none", poolMax: 1 });
    try {
      const { base: b } = await serve([postgresCheck(deadDb), redisCheck(redis), orchestrator], 1_500);
      const res = await fetch(`${b}/api/v1/readiness`);
      expect(res.status).toBe(503);
      const body = (await res.json()) as { error: string; checks: Record<string, string> };
      expect(body.error).toBe("Not ready: postgres");
      expect(body.checks).toEqual({ postgres: "unavailable", redis: "ok", orchestrator: "ok" });
    } finally {
      await deadDb.$disconnect();
    }
  });

  it("runs checks in parallel within one deadline", async () => {
    const hang: ReadinessCheck = { name: "slow", check: () => new Promise(() => undefined) };
    const alsoHang: ReadinessCheck = { name: "slower", check: () => new Promise(() => undefined) };
    const third: ReadinessCheck = { name: "slowest", check: () => new Promise(() => undefined) };
    const { base: b } = await serve([hang, alsoHang, third, postgresCheck(db)], 300);
    const started = Date.now();
    const res = await fetch(`${b}/api/v1/readiness`);
    const took = Date.now() - started;
    expect(took).toBeGreaterThanOrEqual(280);
    // One shared deadline: three hanging checks one after another would take 900 ms.
    expect(took).toBeLessThan(850);
    expect(await res.json()).toEqual({
      status: "not ready",
      error: "Not ready: slow, slower, slowest",
      checks: {
        slow: "timed out after 300 ms",
        slower: "timed out after 300 ms",
        slowest: "timed out after 300 ms",
        postgres: "ok",
      },
    });
  });
});

describe("GET /api/v1/openapi.json", () => {
  it("is a valid OpenAPI 3.0 document describing the gateway's routes", async () => {
    const res = await fetch(`${base}/api/v1/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    const doc = (await res.json()) as Record<string, any>;
    expect(doc.openapi).toMatch(/^3\.0\.\d+$/);
    // Validates against the OpenAPI 3.0 JSON schema and resolves every $ref.
    await SwaggerParser.validate(structuredClone(doc) as never);
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining(["/api/v1/health", "/api/v1/readiness", "/api/v1/openapi.json"]),
    );
    for (const p of ["/api/v1/health", "/api/v1/readiness", "/api/v1/openapi.json"]) {
      expect(doc.paths[p].get.security).toEqual([]);
    }
    expect(Object.keys(doc.paths["/api/v1/readiness"].get.responses).sort()).toEqual(["200", "503"]);
    expect(Object.keys(doc.components.securitySchemes).sort()).toEqual(["ApiKeyAuth", "bearerAuth"]);
    expect(doc.components.schemas.Error).toBeDefined();
    expect(Object.keys(doc.components.headers)).toEqual(
      expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "Retry-After"]),
    );
  });

  it("the linter rejects a broken document (the lint can fail)", async () => {
    const res = await fetch(`${base}/api/v1/openapi.json`);
    const doc = (await res.json()) as Record<string, any>;
    doc.paths["/api/v1/health"].get.responses["200"].content["application/json"].schema = {
      $ref: "#/components/schemas/Nope",
    };
    await expect(SwaggerParser.validate(doc as never)).rejects.toThrow();
  });
});

describe("unknown paths", () => {
  it("answer a JSON 404", async () => {
    const res = await fetch(`${base}/api/v1/nope`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Not found" });
  });
});

describe("POST /api/v1/auth/token", () => {
  it("exchanges an API key for a bearer token, with rate-limit headers; 401 without a key", async () => {
    const user = await new UserRepository({ db }).createFromRef("token-user@example.com");
    const { key } = await new ApiKeyRepository({ db }).create({ userId: user.id, name: "t" });

    const res = await fetch(`${base}/api/v1/auth/token`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ ttl_seconds: 120 }),
    });
    expect(res.status).toBe(201);
    expect(res.headers.get("x-ratelimit-limit")).toBe("60");
    expect(Number(res.headers.get("x-ratelimit-remaining"))).toBeLessThan(60);
    const body = (await res.json()) as {
      access_token: string;
      token_type: string;
      expires_in: number;
      expires_at: string;
    };
    expect(body.token_type).toBe("Bearer");
    expect(body.expires_in).toBeGreaterThanOrEqual(119);
    expect(body.expires_in).toBeLessThanOrEqual(120);
    expect(await tokens.verify(body.access_token)).toEqual({ userId: user.id });

    const anonymous = await fetch(`${base}/api/v1/auth/token`, { method: "POST" });
    expect(anonymous.status).toBe(401);
    expect(await anonymous.json()).toEqual({ error: "Unauthorized" });

    // A token cannot mint tokens.
    const viaBearer = await fetch(`${base}/api/v1/auth/token`, {
      method: "POST",
      headers: { Authorization: `Bearer ${body.access_token}` },
    });
    expect(viaBearer.status).toBe(401);

    const tooLong = await fetch(`${base}/api/v1/auth/token`, {
      method: "POST",
      headers: { "X-API-Key": key, "Content-Type": "application/json" },
      body: JSON.stringify({ ttl_seconds: 10 ** 7 }),
    });
    expect(tooLong.status).toBe(400);
    expect(((await tooLong.json()) as { error: string }).error).toMatch(/^Invalid request body: /);
  });
});
