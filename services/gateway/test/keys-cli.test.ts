import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { execFile } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { createLogger } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import {
  AccessTokens,
  ApiKeyRepository,
  createAuth,
  createIdempotency,
  createRateLimiter,
  startHttpServer,
  type StartedServer,
} from "@tog/edge";
import { createRedis, type Redis } from "@tog/redis";
import { createTestDatabase, testInfraConfig, uniqueId, type TestDatabase } from "@tog/testkit";
import { createGatewayApp, GATEWAY_VERSION } from "../src/index.ts";

// The keys CLI as an operator runs it: a separate process against the same database the
// gateway reads; its keys and tokens must then (not) authenticate at the gateway.

const CLI = fileURLToPath(new URL("../src/cli/keys.ts", import.meta.url));
const SECRET = randomBytes(32).toString("hex");
const logger = createLogger({ service: "keys-cli-test", level: "silent" });
const run = promisify(execFile);

let database: TestDatabase;
let db: Db;
let server: StartedServer;
let redis: Redis;
let base: string;

async function keys(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], {
      env: { PATH: process.env.PATH, NODE_ENV: "test", DATABASE_URL: database.url, AUTH_TOKEN_SECRET: SECRET },
    });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

const whoami = (headers: Record<string, string>, path = "/api/v1/test/whoami") =>
  fetch(base + path, { headers }).then(async (r) => ({ status: r.status, body: (await r.json()) as unknown }));

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDbClient({ databaseUrl: database.url, poolMax: 2 });
  redis = createRedis({ url: testInfraConfig.TEST_REDIS_URL, keyPrefix: `${uniqueId("keys")}:` });
  const tokens = new AccessTokens({ secret: SECRET, ttlSeconds: 3600 });
  const auth = createAuth({
    repository: new ApiKeyRepository({ db, cacheTtlMs: 0 }),
    tokens,
    skipAuth: false,
  });
  const { app } = createGatewayApp({
    logger,
    version: GATEWAY_VERSION,
    auth,
    limits: createRateLimiter({ redis, rpm: 1000, burst: 1000 }),
    idempotency: createIdempotency({ redis, ttlSeconds: 60 }),
    tokens,
    cors: { mode: "development", allowedOrigins: [] },
    maxBodyBytes: 1_048_576,
    readinessChecks: [],
    readinessTimeoutMs: 500,
    modules: [
      ({ router, auth: a }) => {
        router.get("/api/v1/test/whoami", a.require(), (req, res) => void res.json(req.principal));
        router.get("/api/v1/test/stream", a.require({ allowBearer: true }), (req, res) => void res.json(req.principal));
      },
    ],
  });
  server = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => {
  await server?.close();
  redis?.disconnect();
  await db?.$disconnect();
  await database?.drop();
});

describe("npm run keys", () => {
  let key: string;
  let userId: string;
  let keyId: string;

  it("create refuses an unknown user unless --create-user", async () => {
    const r = await keys("create", "--user", "bob@example.com");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('No user "bob@example.com"');
    expect(await db.user.count({ where: { email: "bob@example.com" } })).toBe(0);
  });

  it("create prints a new key once, and it authenticates", async () => {
    const r = await keys(
      "create",
      "--user",
      "bob@example.com",
      "--create-user",
      "--name",
      "laptop",
      "--expires-in",
      "30d",
    );
    expect(r.code).toBe(0);
    const found = r.stdout.match(/sk_[0-9a-f]{64}/g);
    expect(found).toHaveLength(1);
    key = found![0]!;
    const user = await db.user.findUniqueOrThrow({ where: { email: "bob@example.com" } });
    userId = user.id;
    const row = await db.apiKey.findFirstOrThrow({ where: { userId } });
    keyId = row.id;
    expect(row).toMatchObject({
      name: "laptop",
      prefix: key.slice(0, 12),
      keyHash: createHash("sha256").update(key).digest("hex"),
    });
    expect(row.expiresAt!.getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);

    expect(await whoami({ "X-API-Key": key })).toEqual({
      status: 200,
      body: { userId, apiKeyId: keyId, via: "api_key" },
    });
  });

  it("list shows id, prefix and status but never the key or its hash", async () => {
    const r = await keys("list");
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(keyId);
    expect(r.stdout).toContain(key.slice(0, 12));
    expect(r.stdout).toMatch(/\bactive\b/);
    expect(r.stdout).not.toContain(key.slice(12));
    expect(r.stdout).not.toContain(createHash("sha256").update(key).digest("hex"));

    const json = await keys("list", "--user", "bob@example.com", "--json");
    const rows = JSON.parse(json.stdout) as Record<string, unknown>[];
    expect(rows).toEqual([
      expect.objectContaining({
        id: keyId,
        prefix: key.slice(0, 12),
        name: "laptop",
        user_id: userId,
        status: "active",
      }),
    ]);
    expect(json.stdout).not.toContain(key.slice(12));
  });

  it("token prints an access token that authenticates on bearer routes only", async () => {
    const r = await keys("token", "--user", "bob@example.com", "--ttl", "10m");
    expect(r.code).toBe(0);
    const token = r.stdout.trim();
    expect(token).toMatch(/^[\w-]+\.[\w-]+\.[\w-]+$/);
    const claims = JSON.parse(Buffer.from(token.split(".")[1]!, "base64url").toString()) as Record<string, unknown>;
    expect(claims).toEqual({
      jti: expect.any(String),
      sub: userId,
      iat: expect.any(Number),
      exp: (claims.iat as number) + 600,
      iss: "tog-gateway",
      aud: "tog-api",
    });
    expect(await whoami({ Authorization: `Bearer ${token}` }, "/api/v1/test/stream")).toEqual({
      status: 200,
      body: { userId, via: "bearer_token" },
    });
    expect(await whoami({ Authorization: `Bearer ${token}` })).toEqual({
      status: 401,
      body: { error: "Unauthorized" },
    });
  });

  it("revoke by prefix makes the key answer 401", async () => {
    const r = await keys("revoke", key.slice(0, 12));
    expect(r.code).toBe(0);
    expect(r.stdout).toContain(`Revoked API key ${keyId}`);
    expect(await whoami({ "X-API-Key": key })).toEqual({ status: 401, body: { error: "Unauthorized" } });
    const listed = await keys("list", "--json");
    expect(JSON.parse(listed.stdout)).toEqual([expect.objectContaining({ id: keyId, status: "revoked" })]);
  });

  it("rejects unknown commands and options with usage (exit 2)", async () => {
    expect((await keys("frobnicate")).code).toBe(2);
    const r = await keys("create", "--nope");
    expect(r.code).toBe(2);
    expect(r.stderr).toContain("Usage: npm run keys");
  });
});
