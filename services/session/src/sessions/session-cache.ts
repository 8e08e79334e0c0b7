import type { Logger } from "@tog/core";
import type { Redis } from "@tog/redis";
import { LOCAL_MAX_AGE_MS, LocalBodies } from "./local-bodies.ts";

// Redis cache of a session's views: its metadata, its history and its turn pages, plus the
// external id → UUID mapping. Every entry is stamped with two counters it was built under:
// a global epoch and the session's generation. A change to the session bumps its generation
// (`invalidate`), so every entry of it is stale at once; losing changes (the change feed was
// disconnected, or Redis refused a bump) bumps the epoch, so every entry is stale at once.
// A reader builds the value under the stamp it read *before* querying PostgreSQL, so a value
// computed from data older than a concurrent change can never be stored as current.
//
// Keys (under REDIS_KEY_PREFIX): sess:epoch, sess:<id>:gen, sess:<id>:meta, sess:<id>:history.json,
// sess:<id>:turns.json (a hash: one field per page), sess:ref:<external id>. `meta` holds a value
// as JSON with its stamp; the history and the turn pages hold the response body itself after a
// line with the stamp (`readBody`/`writeBody`), so a hit is sent as Redis returned it: a long
// session's history is hundreds of kilobytes, and parsing it, mapping it and serializing it again
// was most of that endpoint's time (docs/performance.md "Session history"). The cache is used only
// while the change feed listens (`feedUp`/`feedDown`). Entries expire after the
// TTL; a generation key outlives every entry written under it, so a generation never restarts
// at a value an old entry carries. Redis unavailable or slow: the cache steps aside (reads go
// to PostgreSQL), with a throttled warning.
//
// The bodies also have a second tier in this process (local-bodies.ts): a copy is sent when the
// stamp Redis holds now is the copy's, and Redis then sends the stamp alone (READ_BODY_SCRIPT).
// Any change of the epoch drops every copy: Redis lost its data or the feed reconnected.

export type SessionView = "meta" | "history" | { turns: string };

export interface CacheRead<T> {
  value: T | undefined;
  /** Pass to `write` with the value built after this read. */
  stamp: string | undefined;
}

export interface SessionCacheOptions {
  redis: Redis;
  /** 0 disables the cache. */
  ttlSeconds: number;
  logger?: Logger | undefined;
  /** A Redis answer slower than this counts as unavailable (default 250 ms). */
  timeoutMs?: number;
  /** Bytes of response bodies this process keeps a copy of (default 0: none; local-bodies.ts). */
  localBytes?: number;
  /** Lifetime of such a copy (default and maximum LOCAL_MAX_AGE_MS). */
  localMaxAgeMs?: number;
}

const EPOCH_KEY = "sess:epoch";
const WARN_EVERY_MS = 30_000;
const GEN_EXTRA_SECONDS = 60;
const PAUSE_MS = 1_000;

/** Per session (4 keys: generation, meta, history, turns): bump the generation, keep it past every entry, drop the views. */
const INVALIDATE_SCRIPT = `
for i = 1, #KEYS, 4 do
  redis.call('INCR', KEYS[i])
  redis.call('EXPIRE', KEYS[i], ARGV[1])
  redis.call('DEL', KEYS[i + 1], KEYS[i + 2], KEYS[i + 3])
end
return #KEYS / 4`;

/**
 * A body view's stamp and, unless it is the stamp of the copy this process holds (ARGV[1]),
 * the entry itself: one round trip either way, and the body crosses the wire only when needed.
 * KEYS: epoch, generation, view; ARGV[2]: the turn page's field, "" for the history.
 */
const READ_BODY_SCRIPT = `
local epoch = redis.call('GET', KEYS[1]) or '0'
local gen = redis.call('GET', KEYS[2]) or '0'
if ARGV[1] == epoch .. ':' .. gen then return {epoch, gen} end
local entry
if ARGV[2] == '' then entry = redis.call('GET', KEYS[3]) else entry = redis.call('HGET', KEYS[3], ARGV[2]) end
return {epoch, gen, entry}`;

interface BodyReader {
  readSessionBodyBuffer(
    epochKey: string,
    genKey: string,
    viewKey: string,
    heldStamp: string,
    field: string,
  ): Promise<[Buffer, Buffer, Buffer | null] | [Buffer, Buffer]>;
}

const genKey = (id: string) => `sess:${id}:gen`;
const refKey = (userId: string, externalId: string) => `sess:ref:${userId}:${externalId}`;
const viewKey = (id: string, view: SessionView) =>
  view === "meta" ? `sess:${id}:meta` : view === "history" ? `sess:${id}:history.json` : `sess:${id}:turns.json`;
const localKeyOf = (id: string, view: Exclude<SessionView, "meta">) =>
  typeof view === "string" ? viewKey(id, view) : `${viewKey(id, view)}\n${view.turns}`;
const NEWLINE = 0x0a;

export class SessionCache {
  readonly #redis: Redis;
  readonly #ttl: number;
  readonly #logger: Logger | undefined;
  readonly #timeoutMs: number;
  /** A bump failed: until the epoch moves, nothing in Redis may be trusted. */
  #dirty = false;
  /** The change feed listens: only then are changes made elsewhere seen (see `feedUp`). */
  #live = false;
  /** After a failure Redis is left alone for a moment, so an outage does not slow every request. */
  #pausedUntil = 0;
  #lastWarn = 0;
  readonly #local: LocalBodies;
  /** The epoch of the stamps the local copies were taken under. */
  #localEpoch: string | undefined;

  constructor(options: SessionCacheOptions) {
    this.#redis = options.redis;
    this.#ttl = options.ttlSeconds;
    this.#logger = options.logger;
    this.#timeoutMs = options.timeoutMs ?? 250;
    this.#local = new LocalBodies({
      maxBytes: options.ttlSeconds > 0 ? (options.localBytes ?? 0) : 0,
      maxAgeMs: Math.min(options.localMaxAgeMs ?? LOCAL_MAX_AGE_MS, LOCAL_MAX_AGE_MS, options.ttlSeconds * 1_000),
    });
    this.#redis.defineCommand("readSessionBody", { numberOfKeys: 3, lua: READ_BODY_SCRIPT });
  }

  get enabled(): boolean {
    return this.#ttl > 0;
  }

  get #available(): boolean {
    return this.#live && Date.now() >= this.#pausedUntil;
  }

  /** The change feed (re)started listening: what was cached before may have missed changes. */
  async feedUp(): Promise<void> {
    await this.invalidateAll();
    this.#live = true;
  }

  /** The change feed lost its connection: the cache steps aside until it is back. */
  feedDown(): void {
    this.#live = false;
  }

  async read<T>(sessionId: string, view: "meta"): Promise<CacheRead<T>> {
    const { value: raw, stamp } = await this.#fetch(sessionId, view);
    if (raw === undefined) return { value: undefined, stamp };
    try {
      const entry = JSON.parse(raw) as { s: string; v: T };
      return { value: entry.s === stamp ? entry.v : undefined, stamp };
    } catch (err) {
      this.#warn(err);
      return { value: undefined, stamp: undefined };
    }
  }

  /** A cached response body, current under the stamp read with it; never parsed here. */
  async readBody(sessionId: string, view: Exclude<SessionView, "meta">): Promise<CacheRead<Buffer>> {
    const localKey = localKeyOf(sessionId, view);
    return this.#guarded<CacheRead<Buffer>>({ value: undefined, stamp: undefined }, async () => {
      const [epoch, gen, raw] = await this.#timed(
        (this.#redis as unknown as BodyReader).readSessionBodyBuffer(
          EPOCH_KEY,
          genKey(sessionId),
          viewKey(sessionId, view),
          this.#local.stampOf(localKey) ?? "",
          typeof view === "string" ? "" : view.turns,
        ),
      );
      const stamp = this.#stamp(epoch.toString(), gen.toString());
      // Redis left the body out: the copy held was current when the script ran.
      if (raw === undefined) return { value: this.#local.body(localKey, stamp), stamp };
      if (raw === null) return { value: undefined, stamp };
      const end = raw.indexOf(NEWLINE);
      if (end !== stamp.length || raw.toString("latin1", 0, end) !== stamp) return { value: undefined, stamp };
      const body = raw.subarray(end + 1);
      this.#local.keep(localKey, stamp, body);
      return { value: body, stamp };
    });
  }

  async write(sessionId: string, view: "meta", stamp: string | undefined, value: unknown): Promise<void> {
    await this.#store(sessionId, view, stamp, () => JSON.stringify({ s: stamp, v: value }));
  }

  /** `body` must be the response body for the view as built under `stamp`. */
  async writeBody(
    sessionId: string,
    view: Exclude<SessionView, "meta">,
    stamp: string | undefined,
    body: string,
  ): Promise<void> {
    const stored = await this.#store(sessionId, view, stamp, () => `${stamp}\n${body}`);
    // Kept here only once Redis holds it: its store kept the generation alive past the copy.
    if (stored && stamp !== undefined) this.#local.keep(localKeyOf(sessionId, view), stamp, Buffer.from(body));
  }

  async #fetch(sessionId: string, view: "meta"): Promise<CacheRead<string>> {
    return this.#guarded<CacheRead<string>>({ value: undefined, stamp: undefined }, async () => {
      const results = await this.#timed(
        this.#redis.multi().get(EPOCH_KEY).get(genKey(sessionId)).get(viewKey(sessionId, view)).exec(),
      );
      const [epoch, gen, raw] = (results ?? []).map(([err, v]) => {
        if (err) throw err;
        return v as string | null;
      });
      return { value: raw ?? undefined, stamp: this.#stamp(epoch ?? "0", gen ?? "0") };
    });
  }

  /** `read` when the cache may be used; else, and when Redis fails (with a warning), `none`. */
  async #guarded<R>(none: R, read: () => Promise<R>): Promise<R> {
    if (!this.enabled || !this.#available) return none;
    try {
      if (this.#dirty) await this.invalidateAll();
      if (this.#dirty) return none;
      return await read();
    } catch (err) {
      this.#warn(err);
      return none;
    }
  }

  /** The stamp read from Redis; a new epoch drops every copy (see `#sameEpoch`). */
  #stamp(epoch: string, gen: string): string {
    this.#sameEpoch(epoch);
    return `${epoch}:${gen}`;
  }

  /** A new epoch drops every copy: the stamps they carry may come back if Redis lost its data. */
  #sameEpoch(epoch: string): void {
    if (this.#localEpoch === epoch) return;
    this.#local.clear();
    this.#localEpoch = epoch;
  }

  /** True once Redis holds the entry. */
  async #store(sessionId: string, view: SessionView, stamp: string | undefined, entry: () => string): Promise<boolean> {
    if (!this.enabled || stamp === undefined || this.#dirty || !this.#available) return false;
    const key = viewKey(sessionId, view);
    try {
      const tx = this.#redis.multi();
      if (typeof view === "string") tx.set(key, entry(), "EX", this.#ttl);
      else tx.hset(key, view.turns, entry()).expire(key, this.#ttl);
      // The generation must outlive this entry (EXPIRE on a missing key does nothing).
      tx.expire(genKey(sessionId), this.#ttl + GEN_EXTRA_SECONDS);
      const results = await this.#timed(tx.exec());
      return results !== null && results.every(([err]) => err === null);
    } catch (err) {
      this.#warn(err);
      return false;
    }
  }

  /** Every cached view of the session is stale from now on. */
  async invalidate(...sessionIds: string[]): Promise<void> {
    if (!this.enabled || sessionIds.length === 0) return;
    try {
      // One script for every session given (the change feed hands over bursts), atomic as a
      // transaction: one command to build and send instead of three per session.
      const keys = sessionIds.flatMap((id) => [
        genKey(id),
        viewKey(id, "meta"),
        viewKey(id, "history"),
        viewKey(id, { turns: "" }),
      ]);
      await this.#timed(this.#redis.eval(INVALIDATE_SCRIPT, keys.length, ...keys, this.#ttl + GEN_EXTRA_SECONDS));
    } catch (err) {
      this.#dirty = true;
      this.#warn(err);
    }
  }

  /** Every cached view of every session is stale from now on. */
  async invalidateAll(): Promise<void> {
    if (!this.enabled) return;
    try {
      await this.#timed(this.#redis.incr(EPOCH_KEY));
      this.#dirty = false;
    } catch (err) {
      this.#dirty = true;
      this.#warn(err);
    }
  }

  /** The UUID last seen for an external id (the caller verifies it against the session). */
  async refOf(userId: string, externalId: string): Promise<string | undefined> {
    if (!this.enabled || this.#dirty || !this.#available) return undefined;
    try {
      return (await this.#timed(this.#redis.get(refKey(userId, externalId)))) ?? undefined;
    } catch (err) {
      this.#warn(err);
      return undefined;
    }
  }

  async rememberRef(userId: string, externalId: string, sessionId: string): Promise<void> {
    if (!this.enabled || !this.#available) return;
    try {
      await this.#timed(this.#redis.set(refKey(userId, externalId), sessionId, "EX", this.#ttl));
    } catch (err) {
      this.#warn(err);
    }
  }

  async #timed<T>(op: Promise<T>): Promise<T> {
    // A command that loses the race may still fail later; that is already handled here.
    op.catch(() => undefined);
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        op,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`redis did not answer within ${this.#timeoutMs} ms`)),
            this.#timeoutMs,
          );
        }),
      ]);
    } finally {
      clearTimeout(timer);
    }
  }

  #warn(err: unknown): void {
    const now = Date.now();
    this.#pausedUntil = now + PAUSE_MS;
    if (now - this.#lastWarn < WARN_EVERY_MS) return;
    this.#lastWarn = now;
    this.#logger?.warn({ err }, "session cache: Redis unavailable, reading PostgreSQL");
  }
}
