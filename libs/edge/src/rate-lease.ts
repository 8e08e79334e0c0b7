import { RateLimiterRes } from "rate-limiter-flexible";

// Leases on a shared fixed-window counter (docs/decisions.md "Rate limits"): instead of one
// Redis round trip per request, an instance takes several points of a caller's window at once
// and hands them out itself. Redis still counts every point an instance takes, so the instances
// together never admit more than the limit; at most the points an instance holds unused when
// the window ends go to waste (≤ 1 % of the limit per instance: LEASE_SHARE).
//
// - A lease grows with use: a caller's first request takes 1 point; each lease used up within
//   its window doubles the next one, up to `maxLease` and 1 % of the limit; a new window starts
//   at half of where the last one ended. A limit under 200 per window (the defaults: 60/min,
//   20/s) always takes 1 point per request: each request is counted in Redis exactly as before.
// - Near the limit the lease shrinks to half of what Redis said was left, so the last points of
//   a window are taken one at a time and the refusals fall where one shared counter puts them.
// - A lease Redis refuses is given back whole and the request asks for its single point: a
//   refused lease must not count points nobody used.
// - Remaining = what Redis had left after the lease + the lease's unused points: exact with one
//   instance, and never more than the truth with several (other instances' leases count as used).
// - Requests of a caller that arrive while its lease is being taken wait for that round trip
//   and share the new lease, in order.

/** The part of a rate-limiter-flexible limiter a lease needs (RLWrapperTimeouts here). */
export interface PointStore {
  consume(key: string, points?: number): Promise<RateLimiterRes>;
  reward(key: string, points?: number): Promise<RateLimiterRes>;
}

export interface LeasedLimiterOptions {
  store: PointStore;
  /** Points per window (the limit). */
  points: number;
  /** Most points one lease may take; 1 turns leases off. */
  maxLease: number;
  /** Callers (keys) whose leases are kept; the oldest is dropped beyond it. Default 10,000. */
  maxCallers?: number;
}

interface Lease {
  /** Points taken and not yet handed out. */
  left: number;
  /** What Redis had left in the window after this lease. */
  remaining: number;
  /** When the window ends (ms since the epoch). */
  resetAt: number;
  /** Points of the next lease. */
  next: number;
  /** The lease being taken, for the requests that arrive meanwhile. */
  taking?: Promise<void> | undefined;
}

/** 1 % of a limit: the most an instance may hold of one window. */
const LEASE_SHARE = 100;

export class LeasedLimiter {
  readonly #store: PointStore;
  readonly #points: number;
  readonly #cap: number;
  readonly #maxCallers: number;
  readonly #leases = new Map<string, Lease>();

  constructor(options: LeasedLimiterOptions) {
    this.#store = options.store;
    this.#points = options.points;
    this.#cap = Math.max(1, Math.min(options.maxLease, Math.floor(options.points / LEASE_SHARE)));
    this.#maxCallers = options.maxCallers ?? 10_000;
  }

  /**
   * Counts one request of `key`: resolves with the window's state, rejects with it when refused.
   * Without leases the store's own promise is returned, so nothing changes for such limits.
   */
  consume(key: string): Promise<RateLimiterRes> {
    return this.#cap === 1 ? this.#store.consume(key) : this.#consumeLeased(key);
  }

  async #consumeLeased(key: string): Promise<RateLimiterRes> {
    for (;;) {
      const lease = this.#leases.get(key);
      const now = Date.now();
      if (lease !== undefined && now < lease.resetAt) {
        if (lease.left > 0) {
          lease.left -= 1;
          return new RateLimiterRes(lease.remaining + lease.left, lease.resetAt - now, this.#points - lease.remaining);
        }
        if (lease.taking !== undefined) {
          await lease.taking;
          continue;
        }
      }
      return this.#take(key, lease, now);
    }
  }

  /** Takes a new lease for `key` (its last one is used up or from a past window) and hands out its first point. */
  async #take(key: string, last: Lease | undefined, now: number): Promise<RateLimiterRes> {
    const size = this.#leaseSize(last, now);
    let done!: () => void;
    const lease: Lease = {
      left: 0,
      remaining: this.#points,
      resetAt: Number.POSITIVE_INFINITY,
      next: size,
      taking: new Promise<void>((resolve) => (done = resolve)),
    };
    this.#remember(key, lease);
    try {
      const res = await this.#takePoints(key, size);
      lease.left = size - 1;
      lease.remaining = res.remainingPoints;
      lease.resetAt = Date.now() + res.msBeforeNext;
      lease.next = Math.min(this.#cap, size * 2);
      return new RateLimiterRes(res.remainingPoints + lease.left, res.msBeforeNext, res.consumedPoints);
    } catch (err) {
      // Refused (or Redis and its stand-in both failed): the next request asks Redis again.
      this.#leases.delete(key);
      throw err;
    } finally {
      lease.taking = undefined;
      done();
    }
  }

  /** One lease's points from the store; a refused lease is given back and one point asked for. */
  async #takePoints(key: string, size: number): Promise<RateLimiterRes> {
    if (size === 1) return this.#store.consume(key, 1);
    try {
      return await this.#store.consume(key, size);
    } catch (err) {
      if (!(err instanceof RateLimiterRes)) throw err;
      await this.#store.reward(key, size);
      return this.#store.consume(key, 1);
    }
  }

  /**
   * After a lease used up within its window: twice the last (`next`), never more than half of
   * what Redis has left. In a new window: half of what the last window ended with, so a caller
   * whose requests thin out comes back to single points.
   */
  #leaseSize(last: Lease | undefined, now: number): number {
    if (last === undefined) return 1;
    if (now >= last.resetAt) return Math.max(1, last.next >> 1);
    return Math.max(1, Math.min(last.next, Math.floor(last.remaining / 2)));
  }

  #remember(key: string, lease: Lease): void {
    this.#leases.delete(key);
    if (this.#leases.size >= this.#maxCallers) {
      const oldest = this.#leases.keys().next().value;
      if (oldest !== undefined) this.#leases.delete(oldest);
    }
    this.#leases.set(key, lease);
  }
}
