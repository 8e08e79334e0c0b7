import { describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "@tog/core";
import { AccessTokens, assertAuthConfig, authConfigShape, PUBLISHED_TOKEN_SECRETS } from "../src/index.ts";

// Issue 11 defect 1: no published or default secret ever verifies a token; rotation keeps the
// previous secret for verification only.

const USER = "00000000-0000-4000-8000-000000000001";
const load = (env: Record<string, string>) => {
  const config = loadConfig(authConfigShape, env);
  assertAuthConfig(config);
  return config;
};

describe("token secret configuration", () => {
  it.each(PUBLISHED_TOKEN_SECRETS.flatMap((s) => ["development", "production", "test"].map((e) => [s, e] as const)))(
    "refuses the published secret %s in NODE_ENV=%s, as current or previous",
    (secret, nodeEnv) => {
      for (const name of ["AUTH_TOKEN_SECRET", "AUTH_TOKEN_SECRET_PREVIOUS"]) {
        for (const skip of ["0", "1"]) {
          expect(() => load({ NODE_ENV: nodeEnv, GATEWAY_SKIP_AUTH: skip, [name]: secret })).toThrow(/published value/);
        }
      }
    },
  );

  it("refuses to start with authentication on and no secret, with a clear message", () => {
    expect(() => load({ GATEWAY_SKIP_AUTH: "0" })).toThrow(ConfigError);
    expect(() => load({ GATEWAY_SKIP_AUTH: "0", AUTH_TOKEN_SECRET: "" })).toThrow(/AUTH_TOKEN_SECRET must be set/);
  });

  it("has no default secret: with authentication off and none set, no token verifies", async () => {
    const config = load({ GATEWAY_SKIP_AUTH: "1" });
    expect(config.AUTH_TOKEN_SECRET).toBeUndefined();
    const none = new AccessTokens({ secret: config.AUTH_TOKEN_SECRET, ttlSeconds: 60 });
    expect(none.enabled).toBe(false);
    for (const published of PUBLISHED_TOKEN_SECRETS) {
      const forged = await new AccessTokens({ secret: published, ttlSeconds: 60 }).issue(USER);
      expect(await none.verify(forged.token)).toBeUndefined();
    }
    await expect(none.issue(USER)).rejects.toThrow(/AUTH_TOKEN_SECRET/);
  });

  it("rotation: current signs, previous still verifies, a third secret does not", async () => {
    const oldSecret = "o".repeat(40);
    const newSecret = "n".repeat(40);
    const before = await new AccessTokens({ secret: oldSecret, ttlSeconds: 60 }).issue(USER);
    const rotated = new AccessTokens({ secret: newSecret, previousSecret: oldSecret, ttlSeconds: 60 });
    expect(await rotated.verify(before.token)).toEqual({ userId: USER });
    const after = await rotated.issue(USER);
    expect(await new AccessTokens({ secret: newSecret, ttlSeconds: 60 }).verify(after.token)).toEqual({ userId: USER });
    expect(await new AccessTokens({ secret: oldSecret, ttlSeconds: 60 }).verify(after.token)).toBeUndefined();
    const other = await new AccessTokens({ secret: "x".repeat(40), ttlSeconds: 60 }).issue(USER);
    expect(await rotated.verify(other.token)).toBeUndefined();
  });
});
