import { Redis } from "ioredis";
import { z } from "zod";

export const redisConfigShape = {
  REDIS_URL: z.string().default("redis://127.0.0.1:6379").describe("Redis URL (rate limits, idempotency, caches)."),
  REDIS_KEY_PREFIX: z
    .string()
    .default("tog:")
    .describe("Prefix of every Redis key this deployment writes (lets several deployments or tests share one Redis)."),
};

export interface RedisOptions {
  url: string;
  /** Prepended to every key by ioredis itself, so callers never build prefixed keys by hand. */
  keyPrefix?: string;
  /** Name shown in CLIENT LIST. */
  connectionName?: string;
}

export type { Redis };

export function createRedis(options: RedisOptions): Redis {
  return new Redis(options.url, {
    keyPrefix: options.keyPrefix ?? "",
    connectionName: options.connectionName,
    // Fail commands fast while disconnected instead of queueing them without bound.
    maxRetriesPerRequest: 2,
    enableOfflineQueue: true,
    lazyConnect: false,
    // Commands issued in the same tick (a request's rate-limit pair, concurrent requests) leave
    // in one write: fewer syscalls per request, which dominate CPU here (docs/performance.md).
    enableAutoPipelining: true,
  });
}

/** PING with a deadline, for readiness checks. */
export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      redis.ping(),
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error("redis ping timed out")), timeoutMs);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}
