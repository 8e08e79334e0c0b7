import type { Db } from "@tog/db";
import { isUuid, type Logger } from "@tog/core";
import { apiKeyDisplayPrefix, generateApiKey, hashApiKey } from "./api-key.ts";

/** What may leave the repository: never the key, never its hash. */
export interface ApiKeyInfo {
  id: string;
  userId: string;
  name: string;
  prefix: string;
  isActive: boolean;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  createdAt: Date;
  revokedAt: Date | null;
}

/** The little the auth middleware needs about a key that may be used. */
export interface ActiveApiKey {
  id: string;
  userId: string;
  expiresAt: Date | null;
}

export interface ApiKeyRepositoryOptions {
  db: Db;
  logger?: Logger;
  /**
   * How long a found key is reused from process memory. Keeps PostgreSQL off the per-request
   * path; the price is that a key revoked by another process works here for at most this long.
   * 0 disables the cache.
   */
  cacheTtlMs?: number;
  /** At most one `last_used_at` write per key per this interval. */
  touchIntervalMs?: number;
  now?: () => number;
}

const INFO_SELECT = {
  id: true,
  userId: true,
  name: true,
  prefix: true,
  isActive: true,
  expiresAt: true,
  lastUsedAt: true,
  createdAt: true,
  revokedAt: true,
} as const;

const CACHE_MAX_ENTRIES = 10_000;

export class ApiKeyRepository {
  private readonly db: Db;
  private readonly logger: Logger | undefined;
  private readonly cacheTtlMs: number;
  private readonly touchIntervalMs: number;
  private readonly now: () => number;
  private readonly cache = new Map<string, { key: ActiveApiKey; until: number; refreshAt: number }>();
  private readonly lastTouched = new Map<string, number>();
  /** Lookups in flight by hash: when a cached key expires under load, its requests share one query. */
  private readonly inFlight = new Map<string, Promise<ActiveApiKey | null>>();
  /** Bumped by every local revoke: a lookup that started before it must not cache its answer. */
  private evictions = 0;

  constructor(options: ApiKeyRepositoryOptions) {
    this.db = options.db;
    this.logger = options.logger;
    this.cacheTtlMs = options.cacheTtlMs ?? 5_000;
    this.touchIntervalMs = options.touchIntervalMs ?? 60_000;
    this.now = options.now ?? Date.now;
  }

  /** Creates a key for a user; the returned `key` is the only time the secret exists outside the caller. */
  async create(input: {
    userId: string;
    name: string;
    expiresAt?: Date | null;
  }): Promise<{ key: string; info: ApiKeyInfo }> {
    const key = generateApiKey();
    const info = await this.db.apiKey.create({
      data: {
        userId: input.userId,
        name: input.name,
        prefix: apiKeyDisplayPrefix(key),
        keyHash: hashApiKey(key),
        expiresAt: input.expiresAt ?? null,
      },
      select: INFO_SELECT,
    });
    return { key, info };
  }

  async list(filter: { userId?: string } = {}): Promise<ApiKeyInfo[]> {
    return this.db.apiKey.findMany({
      where: filter.userId === undefined ? {} : { userId: filter.userId },
      select: INFO_SELECT,
      orderBy: { createdAt: "asc" },
    });
  }

  /** Keys matching an id or a display prefix (a prefix may, rarely, match several). */
  async findByIdOrPrefix(ref: string): Promise<ApiKeyInfo[]> {
    if (isUuid(ref)) {
      const one = await this.db.apiKey.findUnique({ where: { id: ref.toLowerCase() }, select: INFO_SELECT });
      return one ? [one] : [];
    }
    return this.db.apiKey.findMany({ where: { prefix: ref }, select: INFO_SELECT });
  }

  /** Disables a key for good. Returns the updated key, or undefined when no key has that id. */
  async revoke(id: string): Promise<ApiKeyInfo | undefined> {
    const at = new Date(this.now());
    const { count } = await this.db.apiKey.updateMany({
      where: { id, revokedAt: null },
      data: { isActive: false, revokedAt: at },
    });
    if (count === 0) {
      // Already revoked (or unknown): make sure it is at least disabled.
      await this.db.apiKey.updateMany({ where: { id }, data: { isActive: false } });
    }
    this.evict(id);
    const info = await this.db.apiKey.findUnique({ where: { id }, select: INFO_SELECT });
    return info ?? undefined;
  }

  /**
   * The key with this hash if it is active, not revoked and not expired; otherwise undefined.
   * The lookup goes through the unique index on `key_hash`: the hash of a random 256-bit
   * secret gives an attacker nothing to time, so no separate constant-time compare is needed.
   */
  async findActiveByHash(keyHash: string): Promise<ActiveApiKey | undefined> {
    const now = this.now();
    const cached = this.cache.get(keyHash);
    if (cached && cached.until > now) {
      // Refresh ahead: past half its life, a key in use is looked up again in the background,
      // so under steady traffic no request waits for the lookup (waiting for it stalled every
      // request of the key once per TTL: docs/performance.md "Submit"). A refresh that finds the
      // key gone drops the entry, so a revocation still takes effect within the TTL.
      if (now >= cached.refreshAt) this.lookup(keyHash).catch(() => undefined);
      return isExpired(cached.key, now) ? undefined : cached.key;
    }
    if (cached) this.cache.delete(keyHash);
    const row = await this.lookup(keyHash);
    if (!row || isExpired(row, now)) return undefined;
    return row;
  }

  /** One query per hash at a time; a found key is cached for `cacheTtlMs`, one not found is dropped. */
  private lookup(keyHash: string): Promise<ActiveApiKey | null> {
    const pending = this.inFlight.get(keyHash);
    if (pending) return pending;
    const evictions = this.evictions;
    const query = this.db.apiKey
      .findFirst({
        where: { keyHash, isActive: true, revokedAt: null },
        select: { id: true, userId: true, expiresAt: true },
      })
      .then((row) => {
        if (!row) this.cache.delete(keyHash);
        else if (this.cacheTtlMs > 0 && evictions === this.evictions) {
          if (!this.cache.has(keyHash) && this.cache.size >= CACHE_MAX_ENTRIES) {
            const oldest = this.cache.keys().next().value;
            if (oldest !== undefined) this.cache.delete(oldest);
          }
          const at = this.now();
          this.cache.set(keyHash, { key: row, until: at + this.cacheTtlMs, refreshAt: at + this.cacheTtlMs / 2 });
        }
        return row;
      })
      .finally(() => this.inFlight.delete(keyHash));
    this.inFlight.set(keyHash, query);
    return query;
  }

  /**
   * Records that a key was used, at most once per interval per key and never awaited by the
   * request: a lost write only makes `last_used_at` a little older.
   */
  touchLastUsed(id: string): void {
    const now = this.now();
    const last = this.lastTouched.get(id);
    if (last !== undefined && now - last < this.touchIntervalMs) return;
    if (this.lastTouched.size >= CACHE_MAX_ENTRIES) this.lastTouched.clear();
    this.lastTouched.set(id, now);
    const at = new Date(now);
    // The condition also throttles across processes.
    this.db.apiKey
      .updateMany({
        where: { id, OR: [{ lastUsedAt: null }, { lastUsedAt: { lt: new Date(now - this.touchIntervalMs) } }] },
        data: { lastUsedAt: at },
      })
      .catch((err: unknown) => this.logger?.warn({ err, api_key_id: id }, "could not record API key use"));
  }

  private evict(id: string): void {
    this.evictions++;
    for (const [hash, entry] of this.cache) if (entry.key.id === id) this.cache.delete(hash);
  }
}

function isExpired(key: { expiresAt: Date | null }, now: number): boolean {
  return key.expiresAt !== null && key.expiresAt.getTime() <= now;
}
