// The `tog` CLI end to end against the running system (auth on): every command, --json output,
// exit codes, configuration from the environment or a file, and the live view as a person sees
// it in a terminal (tmux pseudo-terminal): agents, streamed model text, the progress line, the
// result; a stream service killed mid-task (the view resumes); Ctrl-C offering to cancel.
import { execFile, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningService } from "@tog/devstack";
import { TogClient } from "@tog/sdk";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

const REPO = path.resolve(import.meta.dirname, "../..");
const TOG = path.join(REPO, "libs/cli/bin/tog.js");
const hasTmux = (() => {
  try {
    execFileSync("tmux", ["-V"]);
    return true;
  } catch {
    return false;
  }
})();

let env: E2eEnvironment;
let key: string;
let root: string;
let tog: TogClient;
let tmp: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    allowRouterErrors: true, // the stream service is killed mid-task
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: {
      worker: { OFFLINE_CHUNK_DELAY_MS: "60", APPROVAL_TIMEOUT_SECONDS: "60" },
      stream: { STREAM_RETRY_MS: "200", STREAM_KEEPALIVE_MS: "1000" },
    },
  });
  key = (await env.createApiKey({ user: "cli@example.com", createUser: true })).key;
  root = env.baseUrl.replace(/\/api\/v1$/, "");
  tog = new TogClient({ baseUrl: root, apiKey: key });
  tmp = mkdtempSync(path.join(os.tmpdir(), "tog-cli-"));
}, 120_000);
afterAll(async () => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
  await env?.close();
});

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

function run(args: string[], extraEnv: Record<string, string | undefined> = {}): Promise<Run> {
  const childEnv: NodeJS.ProcessEnv = {
    ...process.env,
    TOG_BASE_URL: root,
    TOG_API_KEY: key,
    TOG_CONFIG: undefined,
    XDG_CONFIG_HOME: tmp,
    NO_COLOR: "1",
    ...extraEnv,
  };
  for (const [k, v] of Object.entries(childEnv)) if (v === undefined) delete childEnv[k];
  return new Promise((resolve) => {
    execFile(process.execPath, [TOG, ...args], { env: childEnv, timeout: 60_000 }, (err, stdout, stderr) => {
      const code = err
        ? typeof (err as { code?: unknown }).code === "number"
          ? (err as { code: number }).code
          : 1
        : 0;
      resolve({ code, stdout, stderr });
    });
  });
}

const json = (r: Run) => JSON.parse(r.stdout) as Record<string, unknown>;

// Each command is its own Node process; on a loaded CI machine a test runs many of them.
const SLOW = 180_000;

describe("commands", () => {
  it(
    "submit, tasks get/list/events/timeline/wait/cancel with --json and exit codes",
    async () => {
      const submitted = await run([
        "submit",
        "Say hello",
        "--mode",
        "simple",
        "--session",
        "cli-s1",
        "--context",
        'prompt_params={"tone":"dry"}',
        "--context",
        "role=writer",
        "--json",
      ]);
      expect(submitted.code, submitted.stderr).toBe(0);
      const taskId = json(submitted).task_id as string;
      expect(json(submitted)).toMatchObject({ status: "STATUS_CODE_OK", replayed: false });

      const waited = await run(["tasks", "wait", taskId, "--json"]);
      expect(waited.code).toBe(0);
      expect(json(waited).status).toBe("TASK_STATUS_COMPLETED");

      const got = await run(["tasks", "get", taskId]);
      expect(got.code).toBe(0);
      expect(got.stdout).toContain(`${taskId}  COMPLETED  SIMPLE`);
      expect((await tog.tasks.get(taskId)).query).toBe("Say hello");

      const listed = await run(["tasks", "list", "--session", "cli-s1", "--json"]);
      expect((JSON.parse(listed.stdout) as { task_id: string }[]).map((t) => t.task_id)).toEqual([taskId]);
      const table = await run(["tasks", "list", "--limit", "1"]);
      expect(table.stdout.split("\n")[0]).toMatch(/^TASK\s+STATUS\s+MODE\s+CREATED\s+QUERY/);

      const events = await run(["tasks", "events", taskId, "--json"]);
      const evs = JSON.parse(events.stdout) as { seq: number; type: string }[];
      expect(evs.map((e) => e.seq)).toEqual(evs.map((_, i) => i + 1));
      expect(evs.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
      expect((await run(["tasks", "timeline", taskId, "--json"])).code).toBe(0);

      const cancel = await run(["tasks", "cancel", taskId]);
      expect(cancel.code).toBe(5);
      expect(cancel.stdout).toContain("not cancelled");
    },
    SLOW,
  );

  it(
    "meaningful exit codes and messages for failures",
    async () => {
      const missing = await run(["tasks", "get", "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d"]);
      expect(missing).toMatchObject({ code: 3, stderr: "tog: 404 Task not found\n" });
      const anon = await run(["tasks", "list"], { TOG_API_KEY: undefined });
      expect(anon).toMatchObject({ code: 4, stderr: "tog: 401 Unauthorized\n" });
      const jsonErr = await run(["tasks", "get", "nope", "--json"]);
      expect(JSON.parse(jsonErr.stderr)).toEqual({ error: "Task not found", status: 404 });
      expect((await run(["approve", "w", "a"])).code).toBe(2);
      expect((await run(["tasks", "frobnicate"])).code).toBe(2);
      expect((await run(["submit", "x", "--mode", "nope"])).code).toBe(2);
      const down = await run(["tasks", "list"], { TOG_BASE_URL: "http://127.0.0.1:9" });
      expect(down.code).toBe(6);
      expect(down.stderr).toMatch(/^tog: Cannot reach http:\/\/127\.0\.0\.1:9/);
    },
    SLOW,
  );

  it(
    "reads the server and key from a config file when the environment has none",
    async () => {
      const file = path.join(tmp, "config.json");
      writeFileSync(file, JSON.stringify({ base_url: root, api_key: key }));
      const viaFlag = await run(["--config", file, "tasks", "list", "--json"], {
        TOG_BASE_URL: undefined,
        TOG_API_KEY: undefined,
      });
      expect(viaFlag.code, viaFlag.stderr).toBe(0);
      const viaEnv = await run(["sessions", "list", "--json"], {
        TOG_BASE_URL: undefined,
        TOG_API_KEY: undefined,
        TOG_CONFIG: file,
      });
      expect(viaEnv.code, viaEnv.stderr).toBe(0);
      const xdg = path.join(tmp, "xdg");
      execFileSync("mkdir", ["-p", path.join(xdg, "tog")]);
      writeFileSync(path.join(xdg, "tog", "config.json"), JSON.stringify({ base_url: root, api_key: key }));
      expect(
        (await run(["tasks", "list"], { TOG_BASE_URL: undefined, TOG_API_KEY: undefined, XDG_CONFIG_HOME: xdg })).code,
      ).toBe(0);
    },
    SLOW,
  );

  it(
    "sessions list|get|history|turns|rename|delete",
    async () => {
      const t = await tog.tasks.submit({ query: "Remember green", mode: "simple", session_id: "cli-s2" });
      await tog.tasks.waitUntilDone(t.task_id, { intervalMs: 200 });
      expect((await run(["sessions", "list"])).stdout).toMatch(/^SESSION\s+TASKS/);
      expect(json(await run(["sessions", "get", "cli-s2", "--json"]))).toMatchObject({
        external_id: "cli-s2",
        task_count: 1,
      });
      expect((await run(["sessions", "history", "cli-s2"])).stdout).toContain(t.task_id);
      const turns = JSON.parse((await run(["sessions", "turns", "cli-s2", "--json"])).stdout) as { task_id: string }[];
      expect(turns.map((x) => x.task_id)).toEqual([t.task_id]);
      expect((await run(["sessions", "rename", "cli-s2", "Green things"])).stdout).toBe("renamed: Green things\n");
      expect((await run(["sessions", "delete", "cli-s2"])).code).toBe(0);
      expect((await run(["sessions", "get", "cli-s2"])).code).toBe(3);
    },
    SLOW,
  );

  it(
    "approve --approve and --deny",
    async () => {
      for (const decision of ["--approve", "--deny"] as const) {
        const t = await tog.tasks.submit({
          query: "Summarize the plan",
          mode: "simple",
          context: { require_approval: true },
        });
        let approvalId: string | undefined;
        for await (const e of tog.stream(t.task_id, { types: ["APPROVAL_REQUESTED"] })) {
          approvalId = e.data.approval_id;
          break;
        }
        const r = await run(["approve", t.task_id, approvalId!, decision, "--feedback", "from the cli"]);
        expect(r.code, r.stderr).toBe(0);
        expect(r.stdout).toContain(decision === "--approve" ? "approved:" : "denied:");
        const final = await run(["tasks", "wait", t.task_id]);
        expect(final.code).toBe(decision === "--approve" ? 0 : 1);
      }
    },
    SLOW,
  );

  it(
    "submit --follow --json prints every event as a JSON line, then the task; stream replays",
    async () => {
      const r = await run(["submit", "Say hello", "--mode", "simple", "--follow", "--json"]);
      expect(r.code, r.stderr).toBe(0);
      const lines = r.stdout
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as Record<string, unknown>);
      const events = lines.slice(0, -1);
      expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
      expect(events.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
      expect(lines.at(-1)).toMatchObject({ status: "TASK_STATUS_COMPLETED", task_id: events[0]!.workflow_id });
      const replay = await run(["stream", String(events[0]!.workflow_id), "--json", "--types", "WORKFLOW_COMPLETED"]);
      expect(
        replay.stdout
          .trim()
          .split("\n")
          .map((l) => (JSON.parse(l) as { type: string }).type),
      ).toEqual(["WORKFLOW_COMPLETED"]);
      // The same over WebSocket: every event once, in order; an unknown task is exit 3 (the server's 4404 close).
      const overWs = await run(["stream", String(events[0]!.workflow_id), "--json", "--transport", "ws"]);
      expect(overWs.code, overWs.stderr).toBe(0);
      expect(
        overWs.stdout
          .trim()
          .split("\n")
          .map((l) => (JSON.parse(l) as { seq: number }).seq),
      ).toEqual(events.map((e) => e.seq));
      const unknown = await run(["stream", "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d", "--transport", "ws"]);
      expect(unknown).toMatchObject({
        code: 3,
        stderr: "tog: 404 Task not found (workflow_id 7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d)\n",
      });
    },
    SLOW,
  );
});

// ---- the live view in a pseudo-terminal ----

class Tmux {
  readonly socket = `tog-cli-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  readonly snapshots: string[] = [];

  start(command: string): void {
    execFileSync("tmux", [
      "-L",
      this.socket,
      "-f",
      "/dev/null",
      "new-session",
      "-d",
      "-x",
      "140",
      "-y",
      "50",
      "-s",
      "t",
      command,
    ]);
  }

  screen(): string {
    const s = execFileSync("tmux", ["-L", this.socket, "capture-pane", "-p", "-J", "-S", "-2000", "-t", "t"], {
      encoding: "utf8",
    });
    this.snapshots.push(s);
    return s;
  }

  keys(...keys: string[]): void {
    execFileSync("tmux", ["-L", this.socket, "send-keys", "-t", "t", ...keys]);
  }

  async waitFor(pred: (screen: string) => boolean, timeoutMs = 45_000): Promise<string> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const s = this.screen();
      if (pred(s)) return s;
      if (Date.now() > end) throw new Error(`tmux screen never matched; last screen:\n${s}`);
      await new Promise((r) => setTimeout(r, 100));
    }
  }

  kill(): void {
    try {
      execFileSync("tmux", ["-L", this.socket, "kill-server"]);
    } catch {
      // already gone
    }
    // tmux leaves its socket file behind
    rmSync(path.join(process.env.TMUX_TMPDIR ?? "/tmp", `tmux-${process.getuid?.() ?? 0}`, this.socket), {
      force: true,
    });
  }
}

function shellCommand(args: string[]): string {
  const q = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
  const envs = `TOG_BASE_URL=${q(root)} TOG_API_KEY=${q(key)} XDG_CONFIG_HOME=${q(tmp)} TERM=xterm-256color`;
  return `env ${envs} ${q(process.execPath)} ${q(TOG)} ${args.map(q).join(" ")}; echo "EXIT=$?"; sleep 60`;
}

describe.skipIf(!hasTmux)("the live view in a terminal (tmux)", { timeout: SLOW }, () => {
  let stream: RunningService | undefined;

  it("shows agents, streamed model text, a progress line, then the result", async () => {
    const tmux = new Tmux();
    try {
      tmux.start(
        shellCommand([
          "submit",
          "Research the history of Rome, then compare it with Athens, and summarize both",
          "--mode",
          "complex",
          "--follow",
        ]),
      );
      const end = await tmux.waitFor((s) => s.includes("EXIT="), 90_000);
      expect(end).toContain("EXIT=0");
      expect(end).toMatch(/task [0-9a-f-]{36} · session [0-9a-f-]{36}/);
      expect(end).toContain("▶ started (complex)");
      expect(end).toMatch(/● agent \S+ started/);
      expect(end).toMatch(/✓ agent \S+ finished \(\d+ tokens/);
      expect(end).toMatch(/ {2}│ \S/); // streamed model output
      expect(end).toMatch(/✎ \S+: \d+ tokens, \$\d/);
      expect(end).toMatch(/■ completed in \d+\.\ds · \d+ tokens · \$\d/);
      expect(end).toMatch(/\nCOMPLETED\n/);
      expect(end).toMatch(/\d+ tokens · \$\d+\.\d+/);
      // The progress line was on screen while the task ran, and is gone at the end.
      expect(tmux.snapshots.some((s) => /⟳ (RUNNING|connecting) · .*\d+ events · \d+ tokens · \$\d/.test(s))).toBe(
        true,
      );
      expect(end).not.toContain("⟳");
      // No raw escape sequences or JSON leaked onto the screen.
      expect(end).not.toMatch(/\[2K|\{"workflow_id"/);
    } finally {
      tmux.kill();
    }
  });

  it("survives the stream service being killed mid-task (resumes, no event shown twice)", async () => {
    const tmux = new Tmux();
    try {
      // A long query makes a long offline reply (it quotes the query): about 70 chunks, 60 ms apart, so the
      // task is still streaming when the stream service dies, even on a loaded machine where the screen
      // shows the first chunk late (a reply of about 25 chunks once finished before the kill in CI).
      const query = `Write a long paragraph about rivers: ${"their sources, their courses, their deltas and the towns on their banks; ".repeat(4)}`;
      tmux.start(shellCommand(["submit", query, "--mode", "simple", "--follow"]));
      await tmux.waitFor((s) => s.includes("│ "));
      const instance = stream ?? env.service("stream");
      const port = Number(new URL(instance.url).port);
      await instance.kill();
      await new Promise((r) => setTimeout(r, 300));
      stream = await env.stack.startInstance("stream", {
        port,
        env: { STREAM_RETRY_MS: "200", STREAM_KEEPALIVE_MS: "1000" },
      });
      const end = await tmux.waitFor((s) => s.includes("EXIT="), 90_000);
      expect(end).toContain("↻ connection lost");
      expect(end).toContain("EXIT=0");
      expect(end.match(/▶ started/g)).toHaveLength(1);
      expect(end.match(/■ completed/g)).toHaveLength(1);
    } finally {
      tmux.kill();
    }
  });

  it("Ctrl-C asks whether to cancel; yes cancels the task", async () => {
    const tmux = new Tmux();
    try {
      tmux.start(
        shellCommand([
          "submit",
          "Research the history of Rome, then compare it with Athens, and summarize both",
          "--mode",
          "complex",
          "--follow",
        ]),
      );
      const running = await tmux.waitFor((s) => s.includes("▶ started"));
      const taskId = /task ([0-9a-f-]{36})/.exec(running)![1]!;
      tmux.keys("C-c");
      await tmux.waitFor((s) => s.includes(`Cancel task ${taskId}? [y/N]`));
      tmux.keys("y", "Enter");
      const end = await tmux.waitFor((s) => s.includes("EXIT="));
      expect(end).toContain("cancellation requested");
      expect(end).toContain("EXIT=7");
      expect(end).toMatch(/\nCANCELLED/);
      expect((await tog.tasks.get(taskId)).status).toBe("TASK_STATUS_CANCELLED");
    } finally {
      tmux.kill();
    }
  });

  it("Ctrl-C then no: stops following, the task continues (exit 130)", async () => {
    const tmux = new Tmux();
    try {
      tmux.start(shellCommand(["submit", "Write a long paragraph about oceans", "--mode", "simple", "--follow"]));
      const running = await tmux.waitFor((s) => s.includes("▶ started"));
      const taskId = /task ([0-9a-f-]{36})/.exec(running)![1]!;
      tmux.keys("C-c");
      await tmux.waitFor((s) => s.includes("[y/N]"));
      tmux.keys("n", "Enter");
      const end = await tmux.waitFor((s) => s.includes("EXIT="));
      expect(end).toContain("EXIT=130");
      expect(end).toContain(`Follow again: tog stream ${taskId}`);
      expect((await tog.tasks.waitUntilDone(taskId, { intervalMs: 200 })).status).toBe("TASK_STATUS_COMPLETED");
    } finally {
      tmux.kill();
    }
  });
});
