// A service that cannot reach PostgreSQL, Redis or NATS at start names the dependency, its URL
// (without password) and the variable, retries with backoff for DEPENDENCY_WAIT_SECONDS, then
// exits 1 with one fatal line - no stack (libs/core/src/dependency.ts, docs/decisions.md).
import path from "node:path";
import { describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, runNodeScript, ScriptFailedError, type ScriptResult } from "@tog/devstack";
import { testInfraConfig } from "@tog/testkit";

async function startFailing(
  entry: string,
  env: Record<string, string>,
): Promise<{ result: ScriptResult; records: Record<string, unknown>[] }> {
  const outcome = await runNodeScript({
    entry: path.join(REPO_ROOT, entry),
    cwd: REPO_ROOT,
    timeoutMs: 30_000,
    env: {
      NODE_ENV: "test",
      PORT: "0",
      METRICS_PORT: "0",
      DEPENDENCY_WAIT_SECONDS: "4",
      NATS_PREFIX: "depwait",
      ...env,
    },
  }).then(
    () => {
      throw new Error(`${entry} started although a dependency is unreachable`);
    },
    (err: unknown) => {
      if (!(err instanceof ScriptFailedError)) throw err;
      return err.result;
    },
  );
  const lines = outcome.stdout.split("\n").filter(Boolean);
  return { result: outcome, records: lines.map((l) => JSON.parse(l) as Record<string, unknown>) };
}

function expectNamed(
  { result, records }: { result: ScriptResult; records: Record<string, unknown>[] },
  name: string,
  shownUrl: string,
  variable: string,
) {
  expect(result.code).toBe(1);
  const warnings = records.filter((r) => r.level === "warn" && r.dependency === name);
  expect(warnings.length, "at least one retry before giving up").toBeGreaterThanOrEqual(2);
  expect(warnings[0]?.msg).toContain(`${name} unreachable at ${shownUrl} (set by ${variable})`);
  expect(warnings[0]?.msg).toMatch(/retrying in 0\.5 s$/);
  expect(warnings[1]?.retry_in_ms).toBe(1000);
  const fatal = records.find((r) => r.level === "fatal");
  expect(fatal?.msg).toContain(`failed to start: ${name} unreachable at ${shownUrl} (set by ${variable}) for 4 s`);
  expect(fatal).toMatchObject({ dependency: name, variable, url: shownUrl });
  const all = result.stdout + result.stderr;
  expect(all).not.toContain("secret-pw");
  expect(all, "no stack trace").not.toMatch(/\n\s+at |"stack"/);
}

describe.concurrent("unreachable dependency at start", () => {
  it("gateway: PostgreSQL, with its URL without password and DATABASE_URL", async () => {
    const port = await freePort();
    const outcome = await startFailing("services/gateway/src/main.ts", {
      DATABASE_URL: `postgresql://tog:secret-pw@127.0.0.1:${port}/tog`,
    });
    expectNamed(outcome, "PostgreSQL", `postgresql://tog@127.0.0.1:${port}/tog`, "DATABASE_URL");
  });

  it("session: Redis and REDIS_URL", async () => {
    const port = await freePort();
    const outcome = await startFailing("services/session/src/main.ts", {
      DATABASE_URL: testInfraConfig.TEST_DATABASE_ADMIN_URL,
      REDIS_URL: `redis://:secret-pw@127.0.0.1:${port}`,
      REDIS_KEY_PREFIX: "depwait:",
    });
    expectNamed(outcome, "Redis", `redis://127.0.0.1:${port}`, "REDIS_URL");
  });

  it("stream: NATS and NATS_URL", async () => {
    const port = await freePort();
    const outcome = await startFailing("services/stream/src/main.ts", {
      DATABASE_URL: testInfraConfig.TEST_DATABASE_ADMIN_URL,
      NATS_URL: `nats://127.0.0.1:${port}`,
    });
    expectNamed(outcome, "NATS", `nats://127.0.0.1:${port}`, "NATS_URL");
  });
});
