import { createHash, randomUUID } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import type { Request, RequestHandler, Response } from "express";
import { ConflictError, OverloadedError, ValidationError, type Logger } from "@tog/core";
import type { Redis } from "@tog/redis";

// `Idempotency-Key` handling (docs/api.md "Idempotency"), closing the reference's hole: concurrent duplicates
// run the handler exactly once.
//
// Identity = sha256(key, user id, path, body), fields separated by NUL; the user id is left out
// when auth is off (principal via "anonymous"). The body is the parsed JSON re-serialized, so
// whitespace does not matter but a changed value or key order makes a new request.
//
// Flow: one MULTI both takes the in-flight lock (SET NX PX) and reads the cache. The lock
// holder runs the handler; its response is captured at `res.end` and, when 2xx, stored for
// the TTL before the lock is released (one Lua script, so a waiter never sees "no lock, no
// cache" in between). Duplicates poll the cache and the lock: a cached response is replayed,
// a vanished lock without a cache entry (the first failed) lets the waiter run itself, and
// after `waitTimeoutMs` the answer is 409. The lock expires on its own (crash safety).
// Redis unreachable with an Idempotency-Key → 503 with Retry-After: we do not risk running a
// duplicate. A route whose handler deduplicates durably itself (task submit: the identity is
// stored on the task row under a unique index) uses `createIdempotencyIdentity` instead: no Redis.

export interface IdempotencyOptions {
  redis: Redis;
  /** How long a 2xx response is replayed (IDEMPOTENCY_TTL_SECONDS). */
  ttlSeconds: number;
  logger?: Logger;
  /** How long a duplicate waits for the first request before 409; default 10 s. */
  waitTimeoutMs?: number;
  /** In-flight lock lifetime; a crashed holder blocks the key at most this long. Default 30 s (the write timeout). */
  lockTtlMs?: number;
  /** Prefix under the client's keyPrefix; default `idem`. */
  keyPrefix?: string;
}

export const IDEMPOTENCY_KEY_MAX_LENGTH = 255;
const REPLAYED_HEADERS = ["content-type", "x-workflow-id", "x-session-id", "location"] as const;

interface CachedResponse {
  status: number;
  headers: Record<string, string>;
  /** base64 */
  body: string;
}

// KEYS[1] lock, KEYS[2] cache; ARGV[1] lock token, ARGV[2] response JSON or "", ARGV[3] ttl ms.
const FINISH_SCRIPT = `
if ARGV[2] ~= '' then redis.call('SET', KEYS[2], ARGV[2], 'PX', ARGV[3]) end
if redis.call('GET', KEYS[1]) == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1`;

export function createIdempotency(options: IdempotencyOptions): RequestHandler {
  const { redis, logger } = options;
  const ttlMs = options.ttlSeconds * 1000;
  const waitTimeoutMs = options.waitTimeoutMs ?? 10_000;
  const lockTtlMs = options.lockTtlMs ?? 30_000;
  const prefix = options.keyPrefix ?? "idem";

  return async (req, res, next) => {
    const key = req.get("Idempotency-Key");
    if (key === undefined) {
      next();
      return;
    }
    const hash = requestIdentity(req, key, options.ttlSeconds);
    const cacheKey = `${prefix}:${hash}`;
    const lockKey = `${prefix}:${hash}:lock`;
    const token = randomUUID();
    const deadline = Date.now() + waitTimeoutMs;
    let pollMs = 20;

    try {
      for (;;) {
        const [acquired, cached] = await tryAcquire(redis, lockKey, cacheKey, token, lockTtlMs);
        if (cached !== null) {
          if (acquired) await finish(redis, lockKey, cacheKey, token, "", ttlMs);
          replay(res, key, cached);
          return;
        }
        if (acquired) break;
        // Someone else runs it: wait for its response or for its lock to vanish.
        for (;;) {
          if (Date.now() >= deadline)
            throw new ConflictError("A request with this Idempotency-Key is already in progress");
          await sleep(pollMs);
          pollMs = Math.min(pollMs * 2, 200);
          const [c, lock] = await redis.mget(cacheKey, lockKey);
          if (c != null) {
            replay(res, key, c);
            return;
          }
          if (lock == null) break;
        }
      }
    } catch (err) {
      if (err instanceof ConflictError) throw err;
      logger?.warn({ err }, "idempotency store unavailable");
      throw new OverloadedError("Idempotency store unavailable", { cause: err });
    }

    captureResponse(res, (captured) => {
      const store = captured && captured.status >= 200 && captured.status < 300 ? JSON.stringify(captured) : "";
      finish(redis, lockKey, cacheKey, token, store, ttlMs).catch((err: unknown) =>
        logger?.warn({ err }, "idempotency: storing the response failed; the lock will expire"),
      );
    });
    next();
  };
}

/**
 * `Idempotency-Key` as an identity only, for a handler that deduplicates durably itself: task
 * submit keeps the identity on the task row under a unique index, so a repeat (concurrent or
 * later, within the TTL) returns the first task without Redis; no lock, no cached response, no
 * round trip (docs/api.md "Idempotency", docs/performance.md "Submit").
 */
export function createIdempotencyIdentity(options: { ttlSeconds: number }): RequestHandler {
  return (req, _res, next) => {
    const key = req.get("Idempotency-Key");
    if (key !== undefined) requestIdentity(req, key, options.ttlSeconds);
    next();
  };
}

/** Validates the key, sets `req.idempotency` and returns the identity hash. */
function requestIdentity(req: Request, key: string, ttlSeconds: number): string {
  if (key.length === 0 || key.length > IDEMPOTENCY_KEY_MAX_LENGTH) {
    throw new ValidationError(`Idempotency-Key must be 1 to ${IDEMPOTENCY_KEY_MAX_LENGTH} characters`);
  }
  const hash = identity(req, key);
  req.idempotency = { keyHash: hash, ttlSeconds };
  return hash;
}

function identity(req: Request, key: string): string {
  const p = req.principal;
  return idempotencyIdentity({
    key,
    userId: p === undefined || p.via === "anonymous" ? "" : p.userId,
    path: req.baseUrl + req.path,
    body: req.body === undefined ? "" : JSON.stringify(req.body),
  });
}

/**
 * The identity a request with an Idempotency-Key is known by (the task row's `idempotency_key`).
 * Public so that a verifier outside the gateway (chaos/src/verify.ts) can tell which submission a
 * row belongs to; `body` is the parsed JSON re-serialized, `userId` empty when auth is off.
 */
export function idempotencyIdentity(parts: { key: string; userId: string; path: string; body: string }): string {
  return createHash("sha256")
    .update(parts.key)
    .update("\0")
    .update(parts.userId)
    .update("\0")
    .update(parts.path)
    .update("\0")
    .update(parts.body)
    .digest("hex");
}

async function tryAcquire(
  redis: Redis,
  lockKey: string,
  cacheKey: string,
  token: string,
  lockTtlMs: number,
): Promise<[boolean, string | null]> {
  const results = await redis.multi().set(lockKey, token, "PX", lockTtlMs, "NX").get(cacheKey).exec();
  if (!results) throw new Error("idempotency transaction aborted");
  const [[setErr, setRes] = [], [getErr, getRes] = []] = results;
  if (setErr) throw setErr;
  if (getErr) throw getErr;
  return [setRes === "OK", (getRes as string | null) ?? null];
}

function finish(redis: Redis, lockKey: string, cacheKey: string, token: string, store: string, ttlMs: number) {
  return redis.eval(FINISH_SCRIPT, 2, lockKey, cacheKey, token, store, String(ttlMs));
}

function replay(res: Response, key: string, raw: string): void {
  const cached = JSON.parse(raw) as CachedResponse;
  for (const [name, value] of Object.entries(cached.headers)) res.setHeader(name, value);
  res.setHeader("X-Idempotency-Cached", "true");
  res.setHeader("X-Idempotency-Key", key);
  res.status(cached.status).end(Buffer.from(cached.body, "base64"));
}

/**
 * Calls `done` once with what `res.end` sent, as `res.end` is called (so the cache is written
 * before the client can repeat the request). A streamed response (`res.write` used) is never
 * captured; `done(undefined)` then runs at `res.end` or when the connection closes. A response
 * that never ends keeps the lock until it expires.
 */
function captureResponse(res: Response, done: (captured: CachedResponse | undefined) => void): void {
  let completed = false;
  let streamed = false;
  const complete = (captured: CachedResponse | undefined) => {
    if (completed) return;
    completed = true;
    done(captured);
  };
  const originalWrite = res.write;
  const originalEnd = res.end;
  res.write = function (this: Response, ...args: unknown[]) {
    streamed = true;
    return (originalWrite as (...a: unknown[]) => boolean).apply(this, args);
  } as Response["write"];
  res.end = function (this: Response, ...args: unknown[]) {
    complete(streamed ? undefined : snapshot(this, args[0], args[1]));
    return (originalEnd as (...a: unknown[]) => Response).apply(this, args);
  } as Response["end"];
  res.once("close", () => {
    if (streamed) complete(undefined);
  });
}

function snapshot(res: Response, chunk: unknown, encoding: unknown): CachedResponse {
  const body =
    typeof chunk === "string"
      ? Buffer.from(chunk, typeof encoding === "string" ? (encoding as BufferEncoding) : "utf8")
      : chunk instanceof Uint8Array
        ? Buffer.from(chunk)
        : Buffer.alloc(0);
  const headers: Record<string, string> = {};
  for (const name of REPLAYED_HEADERS) {
    const v = res.getHeader(name);
    if (v !== undefined) headers[name] = String(v);
  }
  return { status: res.statusCode, headers, body: body.toString("base64") };
}
