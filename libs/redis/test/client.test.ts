import { afterAll, describe, expect, it } from "vitest";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import { createRedis, pingRedis, type Redis } from "../src/index.ts";

// The client factory against the real Redis: the key prefix is applied by ioredis to every key,
// the connection carries its name, and pingRedis bounds a ping by its deadline.

const clients: Redis[] = [];
afterAll(() => {
  for (const c of clients) c.disconnect();
});

function client(options: Partial<Parameters<typeof createRedis>[0]> = {}): Redis {
  const redis = createRedis({ url: testInfraConfig.TEST_REDIS_URL, ...options });
  redis.on("error", () => undefined);
  clients.push(redis);
  return redis;
}

describe("createRedis", () => {
  it("prefixes every key it writes, so callers never build prefixed keys", async () => {
    const prefix = `${uniqueId("redis")}:`;
    const scoped = client({ keyPrefix: prefix });
    const raw = client();
    await scoped.set("greeting", "hi", "EX", 60);
    expect(await raw.get(`${prefix}greeting`)).toBe("hi");
    expect(await raw.get("greeting")).toBeNull();
    expect(await scoped.get("greeting")).toBe("hi");
    await raw.del(`${prefix}greeting`);
  });

  it("names its connection", async () => {
    const name = uniqueId("conn");
    const named = client({ connectionName: name });
    expect(await named.client("GETNAME")).toBe(name);
  });
});

describe("pingRedis", () => {
  it("resolves against a live server", async () => {
    await expect(pingRedis(client(), 2_000)).resolves.toBeUndefined();
  });

  it("fails against a closed port instead of waiting forever", async () => {
    const dead = client({ url: "redis://127.0.0.1:1" });
    await expect(pingRedis(dead, 300)).rejects.toThrow();
  });
});
