import path from "node:path";
import { fileURLToPath } from "node:url";
import { defineConfig } from "vitest/config";
import { testTiers } from "./scripts/test-tiers.ts";

// Three projects (scripts/test-tiers.ts decides which file goes where):
//   unit         no I/O: `npm run test:unit`, seconds. Files share their worker's modules
//                (isolate: false); the few that set process-wide state run isolated in
//                `unit-isolated`, which test:unit runs too;
//   integration  the real PostgreSQL, NATS and Redis: `npm run test:integration`; each test file
//                isolates itself (own database, subject prefix, key prefix), so files run in
//                parallel;
//   e2e          processes: the services started as OS processes (tests-e2e), CLIs and tools;
//                `npm run test:e2e`.
// `vitest run` (npm test) runs all three.

const ROOT = path.dirname(fileURLToPath(import.meta.url));
const tiers = testTiers(ROOT);

/** Where a unit test that reaches for the test infrastructure ends up: closed ports, at once. */
const NO_INFRA = {
  TEST_DATABASE_ADMIN_URL: "postgresql://unit-tests-do-no-io@127.0.0.1:1/none",
  TEST_NATS_URL: "nats://127.0.0.1:1",
  TEST_REDIS_URL: "redis://127.0.0.1:1",
};

export default defineConfig({
  test: {
    // Files at a time. Vitest's default is one fewer than the cores: one file at a time on a
    // 2-core machine, though most e2e and integration time is spent waiting on other processes.
    // Three kept both cores busy and took the whole suite from 1,036 s to 721 s there
    // (docs/contributing.md "Tests").
    maxWorkers: 3,
    projects: [
      {
        test: {
          name: "unit",
          include: tiers.unit,
          env: NO_INFRA,
          isolate: false,
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "unit-isolated",
          include: tiers.unitIsolated,
          env: NO_INFRA,
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "integration",
          include: tiers.integration,
          testTimeout: 20_000,
          hookTimeout: 60_000,
        },
      },
      {
        test: {
          name: "e2e",
          include: ["tests-e2e/**/*.test.ts", ...tiers.e2e],
          setupFiles: ["tests-e2e/harness/failure-logs.ts"],
          testTimeout: 60_000,
          hookTimeout: 120_000,
        },
      },
    ],
  },
});
