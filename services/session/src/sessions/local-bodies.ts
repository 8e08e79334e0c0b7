import { LRUCache } from "lru-cache";

// This process's own copies of the response bodies it served last (history, turn pages), in
// front of Redis. The stamp is still read from Redis on every request: a copy is sent only
// while it is current, and Redis sends the body only when this process does not hold it
// (session-cache.ts, READ_BODY_SCRIPT). A long session's history is hundreds of kilobytes, and
// moving it out of Redis was most of what a cache hit still cost (docs/performance.md "Session
// history").
//
// Why a copy lives at most `maxAgeMs` (default 30 s): a session's generation key is kept at
// least 60 s past the moment any entry stamped with it was read or written, so it cannot expire
// and restart at a value a copy still carries.

export interface LocalBodiesOptions {
  /** Budget for the bodies' bytes; 0 keeps none. */
  maxBytes: number;
  maxAgeMs?: number;
}

interface Copy {
  stamp: string;
  body: Buffer;
}

export const LOCAL_MAX_AGE_MS = 30_000;

export class LocalBodies {
  readonly #copies: LRUCache<string, Copy> | undefined;

  constructor(options: LocalBodiesOptions) {
    if (options.maxBytes <= 0) return;
    this.#copies = new LRUCache<string, Copy>({
      maxSize: options.maxBytes,
      // A body larger than the whole budget is not kept (lru-cache refuses it).
      sizeCalculation: (copy) => Math.max(1, copy.body.length),
      ttl: options.maxAgeMs ?? LOCAL_MAX_AGE_MS,
      // The age counts from when the copy was taken, never from its last use.
      updateAgeOnGet: false,
    });
  }

  /** The stamp of the copy held for `key`, to be checked against Redis. */
  stampOf(key: string): string | undefined {
    return this.#copies?.get(key)?.stamp;
  }

  /** The copy held for `key`, if it was taken under `stamp`. */
  body(key: string, stamp: string): Buffer | undefined {
    const copy = this.#copies?.get(key);
    return copy?.stamp === stamp ? copy.body : undefined;
  }

  keep(key: string, stamp: string, body: Buffer): void {
    this.#copies?.set(key, { stamp, body });
  }

  clear(): void {
    this.#copies?.clear();
  }
}
