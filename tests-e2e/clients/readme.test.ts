// The README's quick start, run as written against the running system (auth off, as `npm start`
// runs): the curl commands (submit, stream, resume, result), the SDK snippet as a script, and
// every CLI line (`npx tog …` from the repository). Only the address and the <placeholders> are
// replaced. A quick start that no
// longer works fails here.
import { execFile } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { TogClient } from "@tog/sdk";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

const REPO = path.resolve(import.meta.dirname, "../..");
const README = readFileSync(path.join(REPO, "README.md"), "utf8");
const TMP = path.join(REPO, ".tmp", `readme-${process.pid}`);

let env: E2eEnvironment;
let root: string;
let host: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "1", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: { worker: { APPROVAL_TIMEOUT_SECONDS: "60" } },
    // the public router `npm start` picks (nginx when installed)
    router: "auto",
  });
  root = env.baseUrl.replace(/\/api\/v1$/, "");
  host = new URL(root).host;
  mkdirSync(TMP, { recursive: true });
}, 120_000);
afterAll(async () => {
  rmSync(TMP, { recursive: true, force: true });
  await env?.close();
});

/** The first fenced block of `lang` after the heading that starts with `heading`. */
function block(heading: string, lang: string): string {
  const at = README.indexOf(`### ${heading}`);
  expect(at, `README has "### ${heading}"`).toBeGreaterThanOrEqual(0);
  const open = README.indexOf(`\`\`\`${lang}\n`, at);
  const close = README.indexOf("\n```", open + 4);
  return README.slice(open + lang.length + 4, close);
}

/** Shell commands of a block: comment lines dropped, `\` continuations joined. */
function commands(text: string): string[] {
  return text
    .replace(/\\\n\s*/g, " ")
    .split("\n")
    .map((l) => l.trim())
    .filter((l) => l !== "" && !l.startsWith("#"));
}

function sh(
  command: string,
  extraEnv: Record<string, string> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    execFile(
      "bash",
      ["-c", command],
      { cwd: REPO, env: { ...process.env, NO_COLOR: "1", ...extraEnv }, timeout: 120_000 },
      (err, stdout, stderr) =>
        resolve({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
    );
  });
}

const local = (command: string) => command.replaceAll("localhost:8080", host);
const dataLines = (out: string) =>
  out
    .split("\n")
    .filter((l) => l.startsWith("data: "))
    .map((l) => JSON.parse(l.slice(6)) as { seq: number; type: string });

describe("README quick start", { timeout: 240_000 }, () => {
  let taskId = "";

  it("curl: submit, stream, resume, result", async () => {
    const [submit, stream, resume, result, ...rest] = commands(block("Submit a task and watch it (curl)", "bash"));
    expect(rest).toEqual([]);
    const submitted = await sh(local(submit!));
    expect(submitted.code, submitted.stderr).toBe(0);
    const body = JSON.parse(submitted.stdout) as { task_id: string; status: string };
    expect(body.status).toBe("STATUS_CODE_OK");
    taskId = body.task_id;

    const streamed = await sh(local(stream!).replaceAll("<task_id>", taskId));
    expect(streamed.code, streamed.stderr).toBe(0);
    const events = dataLines(streamed.stdout);
    expect(events[0]).toMatchObject({ seq: 1, type: "WORKFLOW_STARTED" });
    expect(events.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
    expect(streamed.stdout).toMatch(/^id: \d+-1$/m);

    // The README resumes after its example id's seq (5).
    const resumed = await sh(local(resume!).replaceAll("<task_id>", taskId));
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(dataLines(resumed.stdout).map((e) => e.seq)).toEqual(events.filter((e) => e.seq > 5).map((e) => e.seq));

    let detail: { task_id: string; status: string; result?: string } | undefined;
    for (let i = 0; i < 50 && detail?.status !== "TASK_STATUS_COMPLETED"; i++) {
      if (i > 0) await new Promise((r) => setTimeout(r, 200));
      const got = await sh(local(result!).replaceAll("<task_id>", taskId));
      expect(got.code, got.stderr).toBe(0);
      detail = JSON.parse(got.stdout) as typeof detail;
    }
    expect(detail).toMatchObject({ task_id: taskId, status: "TASK_STATUS_COMPLETED", result: expect.any(String) });
  });

  it("the SDK snippet runs as a script", async () => {
    const code = block("The same with the SDK", "ts").replaceAll("http://localhost:8080", root);
    const file = path.join(TMP, "quickstart.ts");
    writeFileSync(file, code);
    const r = await sh(`node ${JSON.stringify(file)}`);
    expect(r.code, r.stderr).toBe(0);
    // The streamed chunks, then the stored result of the task it submitted (the newest one).
    const tog = new TogClient({ baseUrl: root });
    let newest: { task_id: string; query: string } | undefined;
    for await (const t of tog.tasks.list({ limit: 1 })) newest = t;
    expect(newest!.query).toBe("Explain server-sent events in one paragraph");
    const result = (await tog.tasks.get(newest!.task_id)).result!;
    expect(result.length).toBeGreaterThan(0);
    const out = r.stdout.trimEnd();
    expect(out.endsWith(result.trimEnd()), "ends with the result").toBe(true);
    expect(out.slice(0, out.length - result.trimEnd().length).trim().length, "streamed text first").toBeGreaterThan(0);
  });

  it("every CLI line runs and exits 0", async () => {
    const lines = commands(block("The same with the CLI", "bash"));
    expect(lines[0]).toMatch(/^export TOG_BASE_URL=/);
    // A task waiting for approval, for the approve line.
    const tog = new TogClient({ baseUrl: root });
    const waiting = await tog.tasks.submit({
      query: "Summarize the plan",
      mode: "simple",
      context: { require_approval: true },
    });
    let approvalId = "";
    for await (const e of tog.stream(waiting.task_id)) {
      if (e.type === "APPROVAL_REQUESTED") {
        approvalId = e.data.approval_id;
        break;
      }
    }
    const seen: string[] = [];
    for (const line of lines.slice(1)) {
      expect(line, "a CLI line").toMatch(/^npx tog /);
      const approving = line.includes(" approve ");
      // As written, `npx tog` from the repository (the workspace's bin).
      const command = line
        .replaceAll("<task_id>", taskId)
        .replaceAll("<workflow_id>", approving ? waiting.task_id : taskId)
        .replaceAll("<approval_id>", approvalId);
      const r = await sh(command, { TOG_BASE_URL: root, TOG_API_KEY: "" });
      expect(r.code, `${line}\n${r.stderr}`).toBe(0);
      seen.push(line.split(" ").slice(2, 4).join(" "));
    }
    expect(seen).toEqual(
      expect.arrayContaining([
        'submit "Explain',
        "tasks list",
        "tasks get",
        "approve <workflow_id>",
        "sessions list",
        "stream <workflow_id>",
      ]),
    );
    expect((await tog.tasks.waitUntilDone(waiting.task_id, { intervalMs: 200, timeoutMs: 60_000 })).status).toBe(
      "TASK_STATUS_COMPLETED",
    );
  });
});
