import { z } from "zod";
import { envBoolean, envInt, loadConfig } from "@tog/core";

/** Settings of the e2e harness itself (the services get their own env from the harness). */
export const e2eConfigShape = {
  E2E_TESTCONTAINERS: envBoolean(false).describe(
    "e2e tests: 1 starts PostgreSQL, Redis and NATS in Docker (testcontainers) per test file instead of using the local ones.",
  ),
  E2E_LOGS: z
    .enum(["capture", "echo"])
    .default("capture")
    .describe("e2e tests: `echo` prints every service log line prefixed with `[service]` (they are always captured)."),
  E2E_READY_TIMEOUT_MS: envInt(30_000, 1_000).describe("e2e tests: how long each service may take to become ready."),
  E2E_FUZZ_SEED: z.coerce
    .number()
    .int()
    .optional()
    .describe(
      "e2e fuzz suite (tests-e2e/security): replay the fast-check seed a failure printed (default: a new seed per run).",
    ),
};

export const e2eConfig = loadConfig(e2eConfigShape);
