import type { RequestHandler } from "express";
import { RateLimiterMemory, RateLimiterRedis, RateLimiterRes, RLWrapperTimeouts } from "rate-limiter-flexible";
import { RateLimitedError, type Logger } from "@tog/core";
import type { Redis } from "@tog/redis";
import type { Principal } from "./principal.ts";
import { LeasedLimiter } from "./rate-lease.ts";

// Per-caller rate limits kept in Redis, so every gateway instance counts the same requests.
//
// - Caller: the API key (`k:<apiKeyId>`), else the user (`u:<userId>`, auth off or bearer token).
// - Two fixed windows (rate-limiter-flexible, atomic Lua increment): a per-minute limit and a
//   per-second burst limit. The burst counter is shared by every route of a caller. Routes on the
//   default minute limit share one minute counter; a route with its own limit (GET /tasks: 100)
//   counts in its own bucket, so polling the task list does not eat the budget for submitting.
// - Every request that reaches the limiter counts, rejected ones included (fixed window).
// - Redis keys: rate-limiter-flexible prefixes them with its `keyPrefix` (`rl:m:<bucket>` /
//   `rl:s`), and ioredis then prepends the client's own `keyPrefix` (REDIS_KEY_PREFIX), also to
//   the keys of its Lua script, so limits of different deployments never mix.
// - Redis down or slower than `redisTimeoutMs`: each limiter falls back to an in-process limiter
//   with the same numbers (rate-limiter-flexible's insurance limiter behind RLWrapperTimeouts):
//   limits then hold per instance instead of across instances, requests keep flowing, and a
//   warning is logged (at most every 30 s). While the client first connects, commands wait in
//   ioredis' offline queue (bounded by the same timeout) rather than skipping Redis.
// - Outside express (the stream service answers its stream opens on node:http) `forRoute` gives
//   the same decision as a value; a limiter with its own `keyPrefix` has its own counters, burst
//   included (the stream service's `rl:stream`, docs/security.md "Rate limits").
// - High limits are counted in leases (rate-lease.ts): an instance takes up to `maxLease` points
//   of a caller's window per Redis round trip and hands them out itself.

export interface RateLimiterOptions {
  redis: Redis;
  /** Default requests per minute per caller (RATE_LIMIT_RPM). */
  rpm: number;
  /** Requests per second per caller across all routes (RATE_LIMIT_BURST). */
  burst: number;
  /** Receives the Redis-outage warning. */
  logger?: Logger;
  /** Prefix under the client's keyPrefix; default `rl`. */
  keyPrefix?: string;
  /** A Redis answer slower than this counts as an outage for that request; default 250 ms. */
  redisTimeoutMs?: number;
  /** Most points taken from Redis per round trip for one caller (RATE_LIMIT_LEASE_MAX, 64); 1 (this option's default) = none. */
  maxLease?: number;
}

type Limiter = Pick<LeasedLimiter, "consume">;

export interface RouteLimitOptions {
  /** This route's own per-minute limit, counted in its own bucket. */
  rpm?: number;
  /** Name of the bucket; routes naming the same bucket share its counter. Default `rpm<N>`. */
  bucket?: string;
}

export interface RateLimits {
  /** Middleware for a route; mount it after authentication (it reads `req.principal`). */
  middleware(route?: RouteLimitOptions): RequestHandler;
  /**
   * The same decision for a request answered outside express (the stream service's SSE and
   * WebSocket handshakes): counts one request of `principal` and says what to answer. Resolves
   * undefined when neither Redis nor the fallback could decide (let the request through).
   */
  forRoute(route?: RouteLimitOptions): (principal: Principal) => Promise<RateDecision | undefined>;
}

/** One counted request: the X-RateLimit-* values, and `retryAfter` when it is refused. */
export interface RateDecision {
  /** X-RateLimit-Limit: the route's per-minute limit. */
  limit: number;
  /** X-RateLimit-Remaining (0 when refused). */
  remaining: number;
  /** X-RateLimit-Reset: Unix seconds. */
  reset: number;
  /** Set only when refused: seconds to wait (Retry-After, the 429 body's retry_after; >= 1). */
  retryAfter?: number;
}

/** The rate-limit headers (docs/api.md "Rate limits") of a decision, in order. */
export function rateLimitHeaders(decision: RateDecision): [string, string][] {
  return [
    ["X-RateLimit-Limit", String(decision.limit)],
    ["X-RateLimit-Remaining", String(decision.remaining)],
    ["X-RateLimit-Reset", String(decision.reset)],
  ];
}

const WARN_EVERY_MS = 30_000;

/** The edge settings a service's API limiter reads (edgeConfigShape). */
export interface RateLimitSettings {
  RATE_LIMIT_RPM: number;
  RATE_LIMIT_BURST: number;
  RATE_LIMIT_LEASE_MAX: number;
}

/** The API endpoints' limiter of a service (gateway, session service) from its edge settings. */
export function createApiRateLimiter(options: {
  redis: Redis;
  settings: RateLimitSettings;
  logger: Logger;
}): RateLimits {
  const { redis, settings, logger } = options;
  return createRateLimiter({
    redis,
    rpm: settings.RATE_LIMIT_RPM,
    burst: settings.RATE_LIMIT_BURST,
    maxLease: settings.RATE_LIMIT_LEASE_MAX,
    logger,
  });
}

export function createRateLimiter(options: RateLimiterOptions): RateLimits {
  const prefix = options.keyPrefix ?? "rl";
  let lastWarn = 0;
  const warnOutage = () => {
    const now = Date.now();
    if (now - lastWarn < WARN_EVERY_MS) return;
    lastWarn = now;
    options.logger?.warn("rate limiter: Redis unavailable, limiting per instance until it is back");
  };

  const timeoutMs = options.redisTimeoutMs ?? 250;
  const maxLease = options.maxLease ?? 1;
  const makeLimiter = (points: number, duration: number, keyPrefix: string): Limiter =>
    new LeasedLimiter({
      store: new RLWrapperTimeouts({
        limiter: new RateLimiterRedis({ storeClient: options.redis, points, duration, keyPrefix }),
        timeoutMs,
        insuranceLimiter: new OutageLimiter({ points, duration, keyPrefix }, warnOutage),
      }),
      points,
      maxLease,
    });

  const burst = makeLimiter(options.burst, 1, `${prefix}:s`);
  const minuteLimiters = new Map<string, Limiter>();

  const forRoute = (route: RouteLimitOptions = {}) => {
    const rpm = route.rpm ?? options.rpm;
    const bucket = route.rpm === undefined ? "default" : (route.bucket ?? `rpm${rpm}`);
    const id = `${bucket}/${rpm}`;
    let minute = minuteLimiters.get(id);
    if (!minute) {
      minute = makeLimiter(rpm, 60, `${prefix}:m:${bucket}`);
      minuteLimiters.set(id, minute);
    }
    const decideFor = minute;
    return (principal: Principal) => decide(decideFor, burst, rpm, callerKey(principal), options.logger);
  };

  return {
    forRoute,
    middleware(route = {}) {
      return limitMiddleware(forRoute(route), options.logger);
    },
  };
}

function limitMiddleware(
  decide: (principal: Principal) => Promise<RateDecision | undefined>,
  logger: Logger | undefined,
): RequestHandler {
  let warnedNoPrincipal = false;
  return (req, res, next) => {
    const principal = req.principal;
    if (principal === undefined) {
      if (!warnedNoPrincipal) {
        warnedNoPrincipal = true;
        logger?.warn({ path: req.path }, "rate limiter mounted on a route without req.principal; not limiting");
      }
      next();
      return;
    }
    void decide(principal).then((d) => {
      // Not a limit decision but a failure of both Redis and the fallback: let it through.
      if (d === undefined) {
        next();
        return;
      }
      res.setHeader("X-RateLimit-Limit", String(d.limit));
      res.setHeader("X-RateLimit-Remaining", String(d.remaining));
      res.setHeader("X-RateLimit-Reset", String(d.reset));
      next(d.retryAfter === undefined ? undefined : new RateLimitedError(d.retryAfter));
    });
  };
}

/** Counts one request of `key` in both windows. */
async function decide(
  minute: Limiter,
  burst: Limiter,
  rpm: number,
  key: string,
  logger: Logger | undefined,
): Promise<RateDecision | undefined> {
  const [m, b] = await Promise.allSettled([minute.consume(key), burst.consume(key)]);
  const minuteRes = settledRes(m);
  const burstRes = settledRes(b);
  if (minuteRes === undefined || burstRes === undefined) {
    logger?.error(
      { err: m.status === "rejected" ? m.reason : b.status === "rejected" ? b.reason : undefined },
      "rate limiter failed",
    );
    return undefined;
  }
  const limited = m.status === "rejected" || b.status === "rejected";
  if (!limited) return { limit: rpm, remaining: minuteRes.remainingPoints, reset: resetAt(minuteRes.msBeforeNext) };
  let waitMs = 0;
  if (m.status === "rejected") waitMs = Math.max(waitMs, minuteRes.msBeforeNext);
  if (b.status === "rejected") waitMs = Math.max(waitMs, burstRes.msBeforeNext);
  const retryAfter = Math.max(1, Math.ceil(waitMs / 1000));
  return { limit: rpm, remaining: 0, reset: Math.ceil(Date.now() / 1000) + retryAfter, retryAfter };
}

function callerKey(p: Principal): string {
  return p.apiKeyId !== undefined ? `k:${p.apiKeyId}` : `u:${p.userId}`;
}

/** The limiter's answer whether the request passed (fulfilled) or was limited (rejected with a RateLimiterRes). */
function settledRes(r: PromiseSettledResult<RateLimiterRes>): RateLimiterRes | undefined {
  if (r.status === "fulfilled") return r.value;
  return r.reason instanceof RateLimiterRes ? r.reason : undefined;
}

function resetAt(msBeforeNext: number): number {
  return Math.ceil((Date.now() + Math.max(0, msBeforeNext)) / 1000);
}

/** In-process stand-in used while Redis is unreachable; reports that it is being used. */
class OutageLimiter extends RateLimiterMemory {
  private readonly onUse: () => void;

  constructor(opts: ConstructorParameters<typeof RateLimiterMemory>[0], onUse: () => void) {
    super(opts);
    this.onUse = onUse;
  }

  override consume(key: string | number, points?: number, opts?: Record<string, unknown>): Promise<RateLimiterRes> {
    this.onUse();
    return super.consume(key, points, opts);
  }
}
