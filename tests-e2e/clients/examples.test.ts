// The scripts in examples/ run as a user would run them (node examples/<name>.ts) against the
// running system, and do what their comments say.
import { execFile } from "node:child_process";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

const REPO = path.resolve(import.meta.dirname, "../..");
let env: E2eEnvironment;
let key: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
  });
  key = (await env.createApiKey({ user: "examples@example.com", createUser: true })).key;
}, 120_000);
afterAll(async () => {
  await env?.close();
});

function example(name: string, args: string[] = []): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [path.join(REPO, "examples", name), ...args],
      {
        cwd: REPO,
        env: { ...process.env, TOG_BASE_URL: env.baseUrl.replace(/\/api\/v1$/, ""), TOG_API_KEY: key },
        timeout: 150_000,
      },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

describe("examples/", { timeout: 180_000 }, () => {
  it("submit-and-follow.ts streams the task to the end", async () => {
    const r = await example("submit-and-follow.ts", ["Say hello"]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^task [0-9a-f-]{36} \(session [0-9a-f-]{36}\)/);
    expect(r.stdout).toContain("] WORKFLOW_STARTED");
    expect(r.stdout).toMatch(/\[done: \d+ tokens/);
    expect(r.stdout).toContain("status: TASK_STATUS_COMPLETED");
  });

  it("approvals.ts approves when asked, and --deny denies", async () => {
    const ok = await example("approvals.ts");
    expect(ok.code, ok.stderr).toBe(0);
    expect(ok.stdout).toMatch(/approval requested: .+, id \S+/);
    expect(ok.stdout).toContain("decision recorded: approved");
    expect(ok.stdout).toContain("status: TASK_STATUS_COMPLETED");
    const denied = await example("approvals.ts", ["--deny"]);
    expect(denied.stdout).toContain("decision recorded: denied");
    expect(denied.stdout).toContain("ERROR_OCCURRED (FAILED)");
    expect(denied.stdout).toContain("status: TASK_STATUS_FAILED");
  });

  it("sessions.ts runs two turns, lists them, renames and deletes the session", async () => {
    const r = await example("sessions.ts");
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/session [0-9a-f-]{36} \(example-\d+\): 2 tasks/);
    expect(r.stdout).toMatch(/turn 1: My favourite colour is teal/);
    expect(r.stdout).toMatch(/turn 2: What is my favourite colour\?/);
    expect(r.stdout).toContain('renamed to "Favourite colour"');
    expect(r.stdout.trim().endsWith("deleted")).toBe(true);
  });
});
