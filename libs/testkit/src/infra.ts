import { randomBytes } from "node:crypto";
import { z } from "zod";
import { loadConfig } from "@tog/core";

// Where the test infrastructure lives. Local defaults match the development machine;
// CI or testcontainers runs override them through the environment.
export const testInfraConfigShape = {
  TEST_DATABASE_ADMIN_URL: z
    .string()
    .default("postgresql://postgres@127.0.0.1:5432/postgres")
    .describe("Tests: a PostgreSQL URL allowed to CREATE DATABASE."),
  TEST_NATS_URL: z.string().default("nats://127.0.0.1:4222").describe("Tests: NATS with JetStream."),
  TEST_REDIS_URL: z.string().default("redis://127.0.0.1:6379").describe("Tests: Redis."),
};

export const testInfraConfig = loadConfig(testInfraConfigShape);

/** A short unique id for names of databases, streams, subjects and key prefixes. */
export function uniqueId(label = "t"): string {
  return `${label.toLowerCase().replace(/[^a-z0-9]/g, "")}_${Date.now().toString(36)}${randomBytes(4).toString("hex")}`;
}
