import { z } from "zod";
import { ConfigError, envBoolean, envInt } from "@tog/core";

// Token secrets (docs/security.md, "Secrets"). There is no built-in secret: a value printed in
// this repository (earlier defaults) must never verify a token, whatever NODE_ENV says.
// - Authentication on (GATEWAY_SKIP_AUTH=0) without AUTH_TOKEN_SECRET: the service refuses to
//   start. `npm start` generates one random secret per installation (.local/auth-token-secret)
//   and hands it to every local service; the e2e harness generates one per environment.
// - Authentication off without a secret: bearer tokens are not accepted at all (API keys are).
// - Rotation: AUTH_TOKEN_SECRET signs and verifies; AUTH_TOKEN_SECRET_PREVIOUS only verifies,
//   so tokens issued before a rotation keep working until they expire.

/**
 * Secrets that were published in this repository, refused everywhere: the defaults of earlier
 * versions (the development default, both Compose defaults, the task bench's fallback) and the
 * fixed values tests and benches once configured services with. Fixtures now generate theirs.
 */
export const PUBLISHED_TOKEN_SECRETS: readonly string[] = [
  "tog-development-token-secret-do-not-use-in-production",
  "compose-only-token-secret-change-me-0123456789",
  "change-me-in-production-please-32b",
  "bench-secret-bench-secret-bench-secret",
  "bench-secret-bench-secret-bench-secret-0123",
  "e2e-production-secret-0123456789abcdef0123456789",
  "a-private-token-secret-of-at-least-32-characters",
  "cli-test-secret-cli-test-secret-cli-test-secret",
  "test-secret-test-secret-test-secret-0123456789",
  "another-secret-another-secret-another-secret",
];

const optionalSecret = (name: string) =>
  z.preprocess(
    (v) => (v === "" ? undefined : v),
    z
      .string()
      .min(32, "must be at least 32 characters")
      .refine(
        (v) => !PUBLISHED_TOKEN_SECRETS.includes(v),
        `${name} is a published value (printed in this repository); set a private one`,
      )
      .optional(),
  );

export const authConfigShape = {
  GATEWAY_SKIP_AUTH: envBoolean(true).describe(
    "1 (development default): no credential is required and requests act as the default user " +
      "(a valid X-API-Key or bearer token that is sent is still honoured). 0: every protected route needs one.",
  ),
  AUTH_TOKEN_SECRET: optionalSecret("AUTH_TOKEN_SECRET").describe(
    "HS256 secret that signs and verifies bearer access tokens (at least 32 characters; no default). " +
      "Required when GATEWAY_SKIP_AUTH=0 (the service refuses to start without it); without it bearer tokens are refused. " +
      "Values published in this repository are refused. `npm start` generates one per installation in .local/auth-token-secret.",
  ),
  AUTH_TOKEN_SECRET_PREVIOUS: optionalSecret("AUTH_TOKEN_SECRET_PREVIOUS").describe(
    "Rotation: the previous secret, still accepted to verify tokens (never to sign) until they expire.",
  ),
  AUTH_TOKEN_TTL_SECONDS: envInt(3600, 60, 30 * 86_400).describe(
    "Lifetime of access tokens issued by `npm run keys -- token`.",
  ),
  AUTH_KEY_CACHE_MS: envInt(5_000, 0, 60_000).describe(
    "How long a successful API-key lookup is reused in process memory (0 = always ask PostgreSQL). " +
      "A revoked or disabled key keeps working for at most this long in other processes.",
  ),
};

/** Cross-variable rules a per-variable shape cannot express; call after `loadConfig`. */
export function assertAuthConfig(config: { GATEWAY_SKIP_AUTH: boolean; AUTH_TOKEN_SECRET?: string | undefined }): void {
  if (!config.GATEWAY_SKIP_AUTH && config.AUTH_TOKEN_SECRET === undefined) {
    throw new ConfigError(
      "AUTH_TOKEN_SECRET must be set (a private random value of at least 32 characters, e.g. `openssl rand -hex 32`) " +
        "when authentication is on (GATEWAY_SKIP_AUTH=0); `npm start` generates one per installation",
    );
  }
}
