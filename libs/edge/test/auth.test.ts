import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createHash, randomBytes } from "node:crypto";
import { SignJWT } from "jose";
import { createLogger } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";
import {
  AccessTokens,
  ACCESS_TOKEN_AUDIENCE,
  ACCESS_TOKEN_ISSUER,
  ApiKeyRepository,
  createAuth,
  createHttpApp,
  DEFAULT_USER_ID,
  startHttpServer,
  UserRepository,
  type Auth,
  type StartedServer,
} from "@tog/edge";

const SECRET = randomBytes(32).toString("hex");
const UNAUTHORIZED = { error: "Unauthorized" };
const logger = createLogger({ service: "auth-test", level: "silent" });

let database: TestDatabase;
let db: Db;
let users: UserRepository;
let keys: ApiKeyRepository;
let tokens: AccessTokens;
let userId: string;
let validKey: string;
let validKeyId: string;
const servers: StartedServer[] = [];

/** An app with one API-key-only route and one route that also takes bearer tokens. */
async function serve(auth: Auth): Promise<string> {
  const app = createHttpApp({
    logger,
    maxBodyBytes: 1024,
    cors: { mode: "development", allowedOrigins: [] },
    routes: (a) => {
      a.get("/key-only", auth.require(), (req, res) => void res.json(req.principal));
      a.get("/stream", auth.require({ allowBearer: true }), (req, res) => void res.json(req.principal));
    },
  });
  const server = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  servers.push(server);
  return `http://127.0.0.1:${server.port}`;
}

async function call(base: string, path: string, headers: Record<string, string> = {}) {
  const res = await fetch(base + path, { headers });
  return { status: res.status, body: (await res.json()) as unknown, contentType: res.headers.get("content-type") };
}

async function expectUnauthorized(base: string, path: string, headers: Record<string, string> = {}) {
  const r = await call(base, path, headers);
  expect({ status: r.status, body: r.body }).toEqual({ status: 401, body: UNAUTHORIZED });
  expect(r.contentType).toMatch(/^application\/json/);
}

let base: string;

beforeAll(async () => {
  database = await createTestDatabase();
  db = createDbClient({ databaseUrl: database.url, poolMax: 4 });
  users = new UserRepository({ db });
  keys = new ApiKeyRepository({ db, logger, cacheTtlMs: 0 });
  tokens = new AccessTokens({ secret: SECRET, ttlSeconds: 3600 });
  userId = (await users.createFromRef("alice@example.com")).id;
  const created = await keys.create({ userId, name: "valid" });
  validKey = created.key;
  validKeyId = created.info.id;
  base = await serve(createAuth({ repository: keys, tokens, skipAuth: false, logger }));
});

afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
  await db?.$disconnect();
  await database?.drop();
});

describe("API keys", () => {
  it("have the format sk_ + 64 hex and are stored only as SHA-256 with a 12-character prefix", async () => {
    expect(validKey).toMatch(/^sk_[0-9a-f]{64}$/);
    const rows = await db.$queryRaw<Record<string, unknown>[]>`SELECT * FROM api_keys WHERE id = ${validKeyId}::uuid`;
    expect(rows).toHaveLength(1);
    const row = rows[0]!;
    expect(row.key_hash).toBe(createHash("sha256").update(validKey).digest("hex"));
    expect(row.key_prefix).toBe(validKey.slice(0, 12));
    // No column of any row holds the key itself (nor its secret part).
    const [keysDump] = await db.$queryRaw<{ all: string }[]>`SELECT string_agg(t::text, '|') AS all FROM api_keys t`;
    const [usersDump] = await db.$queryRaw<{ all: string }[]>`SELECT string_agg(t::text, '|') AS all FROM users t`;
    expect(keysDump!.all).toContain(validKey.slice(0, 12));
    expect(keysDump!.all).not.toContain(validKey.slice(12));
    expect(usersDump!.all).not.toContain(validKey.slice(12));
  });

  it("list never returns the key or its hash", async () => {
    const listed = await keys.list({ userId });
    expect(listed.map((k) => k.id)).toContain(validKeyId);
    const text = JSON.stringify(listed);
    expect(text).not.toContain(validKey.slice(3));
    expect(text).not.toContain(createHash("sha256").update(validKey).digest("hex"));
    expect(Object.keys(listed[0]!)).not.toContain("keyHash");
  });
});

describe('auth middleware: 401 causes, each with exactly {"error":"Unauthorized"}', () => {
  it("missing credential", async () => {
    await expectUnauthorized(base, "/key-only");
    await expectUnauthorized(base, "/stream");
  });

  it("malformed key", async () => {
    for (const bad of [
      "",
      "sk_abc",
      `sk_${"A".repeat(64)}`,
      `sk_${"0".repeat(63)}`,
      `sk_${"0".repeat(65)}`,
      `pk_${"0".repeat(64)}`,
      `${validKey} x`,
    ]) {
      await expectUnauthorized(base, "/key-only", { "X-API-Key": bad });
    }
    await expectUnauthorized(base, "/stream", { Authorization: "Bearer sk_short" });
    await expectUnauthorized(base, "/stream", { Authorization: `Basic ${Buffer.from("a:b").toString("base64")}` });
    await expectUnauthorized(base, "/stream", { Authorization: "Bearer" });
  });

  it("unknown key", async () => {
    await expectUnauthorized(base, "/key-only", { "X-API-Key": `sk_${"ab".repeat(32)}` });
  });

  it("disabled key", async () => {
    const { key, info } = await keys.create({ userId, name: "disabled" });
    expect((await call(base, "/key-only", { "X-API-Key": key })).status).toBe(200);
    await db.apiKey.update({ where: { id: info.id }, data: { isActive: false } });
    await expectUnauthorized(base, "/key-only", { "X-API-Key": key });
  });

  it("revoked key", async () => {
    const { key, info } = await keys.create({ userId, name: "revoked" });
    expect((await call(base, "/stream", { Authorization: `Bearer ${key}` })).status).toBe(200);
    const revoked = await keys.revoke(info.id);
    expect(revoked?.isActive).toBe(false);
    expect(revoked?.revokedAt).toBeInstanceOf(Date);
    await expectUnauthorized(base, "/key-only", { "X-API-Key": key });
    await expectUnauthorized(base, "/stream", { Authorization: `Bearer ${key}` });
  });

  it("expired key", async () => {
    const { key } = await keys.create({ userId, name: "expired", expiresAt: new Date(Date.now() - 1000) });
    await expectUnauthorized(base, "/key-only", { "X-API-Key": key });
    const soon = await keys.create({ userId, name: "expiring", expiresAt: new Date(Date.now() + 400) });
    expect((await call(base, "/key-only", { "X-API-Key": soon.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 500));
    await expectUnauthorized(base, "/key-only", { "X-API-Key": soon.key });
  });

  it("a credential in the query string, even next to a valid header", async () => {
    for (const name of ["api_key", "apikey", "key", "token", "access_token", "x-api-key", "API_KEY", "key[]"]) {
      await expectUnauthorized(base, `/key-only?${encodeURIComponent(name)}=${validKey}`, { "X-API-Key": validKey });
      await expectUnauthorized(base, `/stream?a=1&${encodeURIComponent(name)}=x`, {
        Authorization: `Bearer ${validKey}`,
      });
    }
  });

  it("a bearer credential on a route that does not take one", async () => {
    const { token } = await tokens.issue(userId);
    await expectUnauthorized(base, "/key-only", { Authorization: `Bearer ${token}` });
    await expectUnauthorized(base, "/key-only", { Authorization: `Bearer ${validKey}` });
  });

  it("bad, expired, wrong-secret, wrong-audience and unsigned access tokens", async () => {
    const key = new TextEncoder().encode(SECRET);
    const now = Math.floor(Date.now() / 1000);
    const sign = (claims: { iss?: string; aud?: string; sub?: string; exp?: number }, secret = key) => {
      let jwt = new SignJWT({}).setProtectedHeader({ alg: "HS256", typ: "JWT" }).setIssuedAt(now);
      if (claims.sub !== undefined) jwt = jwt.setSubject(claims.sub);
      if (claims.iss !== undefined) jwt = jwt.setIssuer(claims.iss);
      if (claims.aud !== undefined) jwt = jwt.setAudience(claims.aud);
      if (claims.exp !== undefined) jwt = jwt.setExpirationTime(claims.exp);
      return jwt.sign(secret);
    };
    const ok = { sub: userId, iss: ACCESS_TOKEN_ISSUER, aud: ACCESS_TOKEN_AUDIENCE, exp: now + 600 };
    const header = (t: string) => ({ Authorization: `Bearer ${t}` });
    const unsigned = `${(await sign(ok)).split(".").slice(0, 2).join(".")}.`;
    const noneAlg =
      Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url") +
      "." +
      Buffer.from(JSON.stringify({ ...ok, iat: now })).toString("base64url") +
      ".";
    const bad = [
      "not-a-jwt",
      unsigned,
      noneAlg,
      `${(await tokens.issue(userId)).token.slice(0, -2)}xx`,
      (await new AccessTokens({ secret: randomBytes(32).toString("hex"), ttlSeconds: 60 }).issue(userId)).token,
      (await tokens.issue(userId, -60)).token,
      await sign({ ...ok, aud: "someone-else" }),
      await sign({ ...ok, iss: "someone-else" }),
      await sign({ ...ok, exp: undefined }),
      await sign({ ...ok, sub: undefined }),
      await sign({ ...ok, sub: "not-a-uuid" }),
    ];
    // Sanity: the same helper signs a token that is accepted.
    expect((await call(base, "/stream", header(await sign(ok)))).status).toBe(200);
    for (const t of bad) await expectUnauthorized(base, "/stream", header(t));
  });
});

describe("auth middleware: accepted credentials", () => {
  it("X-API-Key sets the key's principal", async () => {
    const r = await call(base, "/key-only", { "X-API-Key": validKey });
    expect(r).toMatchObject({ status: 200, body: { userId, apiKeyId: validKeyId, via: "api_key" } });
  });

  it("a bearer API key on a streaming route sets the key's principal", async () => {
    const r = await call(base, "/stream", { Authorization: `bearer ${validKey}` });
    expect(r).toMatchObject({ status: 200, body: { userId, apiKeyId: validKeyId, via: "api_key" } });
  });

  it("a bearer access token on a streaming route sets the token's user", async () => {
    const { token, expiresAt } = await tokens.issue(userId);
    expect(token.split(".")).toHaveLength(3);
    expect(expiresAt.getTime() - Date.now()).toBeGreaterThan(3590_000);
    const r = await call(base, "/stream", { Authorization: `Bearer ${token}` });
    expect(r).toEqual({ status: 200, body: { userId, via: "bearer_token" }, contentType: expect.any(String) });
  });

  it("X-API-Key decides when both headers are sent", async () => {
    const r = await call(base, "/key-only", { "X-API-Key": validKey, Authorization: "Bearer garbage" });
    expect(r.body).toMatchObject({ apiKeyId: validKeyId });
    await expectUnauthorized(base, "/stream", { "X-API-Key": "sk_bad", Authorization: `Bearer ${validKey}` });
  });

  it("records last use at most once per interval, off the request path", async () => {
    const { key, info } = await keys.create({ userId, name: "touched" });
    await call(base, "/key-only", { "X-API-Key": key });
    let first: Date | null = null;
    for (let i = 0; i < 50 && first === null; i++) {
      await new Promise((r) => setTimeout(r, 20));
      first = (await db.apiKey.findUniqueOrThrow({ where: { id: info.id } })).lastUsedAt;
    }
    expect(first).toBeInstanceOf(Date);
    await call(base, "/key-only", { "X-API-Key": key });
    await new Promise((r) => setTimeout(r, 100));
    expect((await db.apiKey.findUniqueOrThrow({ where: { id: info.id } })).lastUsedAt).toEqual(first);
  });
});

describe("positive lookup cache", () => {
  it("keeps a key revoked elsewhere usable for at most the cache TTL; revoking here evicts at once", async () => {
    const cached = new ApiKeyRepository({ db, logger, cacheTtlMs: 400 });
    const cachedBase = await serve(createAuth({ repository: cached, tokens, skipAuth: false }));
    const other = await keys.create({ userId, name: "cached-other" });
    expect((await call(cachedBase, "/key-only", { "X-API-Key": other.key })).status).toBe(200);
    await keys.revoke(other.info.id); // another process, as far as `cached` knows
    expect((await call(cachedBase, "/key-only", { "X-API-Key": other.key })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 450));
    await expectUnauthorized(cachedBase, "/key-only", { "X-API-Key": other.key });

    const own = await cached.create({ userId, name: "cached-own" });
    expect((await call(cachedBase, "/key-only", { "X-API-Key": own.key })).status).toBe(200);
    await cached.revoke(own.info.id);
    await expectUnauthorized(cachedBase, "/key-only", { "X-API-Key": own.key });
  });
});

/** The real client, with its key lookups (`apiKey.findFirst`) passed through `wrap` on the way. */
function withKeyLookups(wrap: (lookup: () => Promise<unknown>) => Promise<unknown>): Db {
  return new Proxy(db, {
    get(target, prop, receiver) {
      const value = Reflect.get(target, prop, receiver) as unknown;
      if (prop !== "apiKey") return value;
      const apiKey = value as Db["apiKey"];
      return new Proxy(apiKey, {
        get(t, p, r) {
          const member = Reflect.get(t, p, r) as unknown;
          if (p !== "findFirst" || typeof member !== "function") return member;
          return (...args: unknown[]) => wrap(() => (member as (...a: unknown[]) => Promise<unknown>).apply(t, args));
        },
      });
    },
  });
}

describe("lookups under load", () => {
  it("concurrent requests with one key share one query, also when its cache entry has expired", async () => {
    let queries = 0;
    const counted = withKeyLookups((lookup) => {
      queries++;
      return lookup();
    });
    const repository = new ApiKeyRepository({ db: counted, logger, cacheTtlMs: 200 });
    const hash = createHash("sha256").update(validKey, "utf8").digest("hex");
    const burst = () => Promise.all(Array.from({ length: 50 }, () => repository.findActiveByHash(hash)));
    const first = await burst();
    expect(first.every((k) => k?.id === validKeyId)).toBe(true);
    expect(queries).toBe(1);
    await new Promise((r) => setTimeout(r, 250));
    await burst();
    expect(queries).toBe(2);
  });

  it("a key in steady use is looked up again before its entry expires: no request waits for it", async () => {
    const own = await keys.create({ userId, name: "refreshed" });
    const hash = createHash("sha256").update(own.key, "utf8").digest("hex");
    let clock = 0;
    let queries = 0;
    // After `hold()`, the answers of lookups started wait for the next `release()`.
    let gate = Promise.resolve();
    let release: () => void = () => undefined;
    const hold = () => void (gate = new Promise<void>((go) => (release = go)));
    const gated = withKeyLookups(async (lookup) => {
      queries++;
      const opened = gate;
      const row = await lookup();
      await opened;
      return row;
    });
    const repository = new ApiKeyRepository({ db: gated, logger, cacheTtlMs: 1_000, now: () => clock });
    const answeredAtOnce = async () => {
      const tooLate = new Promise<"waited">((r) => setTimeout(() => r("waited"), 300));
      return Promise.race([repository.findActiveByHash(hash), tooLate]);
    };

    expect((await repository.findActiveByHash(hash))?.id).toBe(own.info.id);
    expect(queries).toBe(1);
    hold();
    clock = 600; // past half the entry's life: answered from the cache, refreshed behind it
    expect((await answeredAtOnce()) as unknown).toMatchObject({ id: own.info.id });
    expect(queries).toBe(2);
    release();
    await new Promise((r) => setTimeout(r, 50));
    clock = 1_200; // the first entry's TTL is over; the refreshed one answers
    expect((await answeredAtOnce()) as unknown).toMatchObject({ id: own.info.id });
    release();
    await new Promise((r) => setTimeout(r, 50));

    // A refresh that no longer finds the key drops it: a revocation still ends use within the TTL.
    await keys.revoke(own.info.id); // another process, as far as `repository` knows
    clock = 1_800;
    expect((await repository.findActiveByHash(hash))?.id).toBe(own.info.id);
    await new Promise((r) => setTimeout(r, 50));
    expect(await repository.findActiveByHash(hash)).toBeUndefined();
  });
});

describe("GATEWAY_SKIP_AUTH=1", () => {
  let skipBase: string;
  beforeAll(async () => {
    await Promise.all([users.ensureDefaultUser(), users.ensureDefaultUser()]);
    skipBase = await serve(createAuth({ repository: keys, tokens, skipAuth: true, logger }));
  });

  it("the default user row exists (upsert is idempotent)", async () => {
    const u = await db.user.findUniqueOrThrow({ where: { id: DEFAULT_USER_ID } });
    expect(u.name).toBe("default");
  });

  it("no credential acts as the default user", async () => {
    const r = await call(skipBase, "/key-only");
    expect(r.body).toEqual({ userId: DEFAULT_USER_ID, via: "anonymous" });
  });

  it("a valid credential is still honoured", async () => {
    expect((await call(skipBase, "/key-only", { "X-API-Key": validKey })).body).toEqual({
      userId,
      apiKeyId: validKeyId,
      via: "api_key",
    });
    const { token } = await tokens.issue(userId);
    expect((await call(skipBase, "/stream", { Authorization: `Bearer ${token}` })).body).toEqual({
      userId,
      via: "bearer_token",
    });
  });

  it("an invalid credential is ignored", async () => {
    expect((await call(skipBase, "/key-only", { "X-API-Key": "sk_nope" })).body).toEqual({
      userId: DEFAULT_USER_ID,
      via: "anonymous",
    });
    expect((await call(skipBase, "/key-only", { Authorization: "Bearer x" })).body).toEqual({
      userId: DEFAULT_USER_ID,
      via: "anonymous",
    });
  });

  it("a credential in the query string is still refused", async () => {
    await expectUnauthorized(skipBase, `/key-only?api_key=${validKey}`);
  });
});
