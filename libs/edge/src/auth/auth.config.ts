import { z } from "zod";
import { ConfigError, envBoolean, envInt } from "@tog/core";

/** Publicly known, so refused in production (see `assertAuthConfig`). */
export const DEV_AUTH_TOKEN_SECRET = "tog-development-token-secret-do-not-use-in-production";

export const authConfigShape = {
  GATEWAY_SKIP_AUTH: envBoolean(true).describe(
    "1 (development default): no credential is required and requests act as the default user " +
      "(a valid X-API-Key or bearer token that is sent is still honoured). 0: every protected route needs one.",
  ),
  AUTH_TOKEN_SECRET: z
    .string()
    .min(32, "must be at least 32 characters")
    .default(DEV_AUTH_TOKEN_SECRET)
    .describe(
      "HS256 secret that signs and verifies bearer access tokens (at least 32 characters). " +
        "The built-in development value is refused when NODE_ENV=production.",
    ),
  AUTH_TOKEN_TTL_SECONDS: envInt(3600, 60, 30 * 86_400).describe("Lifetime of access tokens issued by `npm run keys -- token`."),
  AUTH_KEY_CACHE_MS: envInt(5_000, 0, 60_000).describe(
    "How long a successful API-key lookup is reused in process memory (0 = always ask PostgreSQL). " +
      "A revoked or disabled key keeps working for at most this long in other processes.",
  ),
};

/** Cross-variable rules a per-variable shape cannot express; call after `loadConfig`. */
export function assertAuthConfig(config: { NODE_ENV: string; AUTH_TOKEN_SECRET: string }): void {
  if (config.NODE_ENV === "production" && config.AUTH_TOKEN_SECRET === DEV_AUTH_TOKEN_SECRET) {
    throw new ConfigError("AUTH_TOKEN_SECRET must be set to a private value when NODE_ENV=production");
  }
}
