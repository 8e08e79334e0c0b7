import { connectBus } from "@tog/bus";
import { createLogger } from "@tog/core";
import { createRedis } from "@tog/redis";

const silent = createLogger({ service: "e2e-cleanup", level: "silent" });

/** Deletes every JetStream stream of a NATS prefix (`<PREFIX>_…`). */
export async function deleteNatsStreams(natsUrl: string, prefix: string): Promise<string[]> {
  const bus = await connectBus({ url: natsUrl, name: "e2e-cleanup", prefix, logger: silent });
  try {
    const mine = `${prefix.toUpperCase()}_`;
    const names: string[] = [];
    for await (const name of bus.jsm.streams.names()) if (name.startsWith(mine)) names.push(name);
    await Promise.all(names.map((n) => bus.jsm.streams.delete(n)));
    return names;
  } finally {
    await bus.close();
  }
}

/** Deletes every Redis key that starts with `prefix`. */
export async function deleteRedisKeys(redisUrl: string, prefix: string): Promise<number> {
  if (prefix.length < 4) throw new Error(`refusing to delete keys under the short prefix "${prefix}"`);
  const redis = createRedis({ url: redisUrl, connectionName: "e2e-cleanup" });
  try {
    let deleted = 0;
    let cursor = "0";
    do {
      const [next, keys] = await redis.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
      cursor = next;
      if (keys.length > 0) deleted += await redis.del(...keys);
    } while (cursor !== "0");
    return deleted;
  } finally {
    redis.disconnect();
  }
}
