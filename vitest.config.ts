import { defineConfig } from "vitest/config";

// One `vitest run` covers every package. Integration tests use the real PostgreSQL, NATS
// and Redis; each test file isolates itself (own database, subject prefix, key prefix),
// so files run in parallel. End-to-end tests start services as OS processes.
export default defineConfig({
  test: {
    projects: [
      {
        test: {
          name: "unit",
          include: ["libs/*/test/**/*.test.ts", "services/*/test/**/*.test.ts", "scripts/test/**/*.test.ts"],
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["tests-e2e/**/*.test.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
