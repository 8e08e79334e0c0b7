import { spawnSync } from "node:child_process";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { deployTestsConfig } from "./deploy-tests.config.ts";

// The command-line tools the deployment checks run, found the way scripts/ensure-deploy-tools.sh
// installs them. A missing tool skips its checks on a developer's machine and fails them in CI.

export const REPO_ROOT = fileURLToPath(new URL("../../../", import.meta.url));
export const ENSURE_HINT = "install it with `bash scripts/ensure-deploy-tools.sh`";

const answers = (cmd: string, args: string[]) => {
  const r = spawnSync(cmd, args, { encoding: "utf8", timeout: 20_000 });
  return r.error === undefined && r.status === 0 ? `${r.stdout}${r.stderr}` : undefined;
};

/** kubectl with kustomize v4 or newer (Debian's kubernetes-client 1.20 embeds kustomize v2, too old for k8s/). */
export function findKubectl(): string | undefined {
  for (const candidate of [path.join(REPO_ROOT, ".tools/kubectl/kubectl"), "kubectl"]) {
    const out = answers(candidate, ["version", "--client"]);
    if (out !== undefined && /Kustomize Version: v([4-9]|\d{2,})\./.test(out)) return candidate;
  }
  return undefined;
}

export const findDockerCompose = (): string | undefined =>
  answers("docker-compose", ["version"]) === undefined ? undefined : "docker-compose";

export function findNginx(): string | undefined {
  for (const candidate of ["nginx", "/usr/sbin/nginx"]) if (answers(candidate, ["-v"]) !== undefined) return candidate;
  return undefined;
}

export const findPromtool = (): string | undefined =>
  answers("promtool", ["--version"]) === undefined ? undefined : "promtool";

export interface ToolGate {
  /** True on a developer's machine without the tool: the suite is skipped. */
  skip: boolean;
  /** Call in beforeAll: throws (in CI) when the tool is missing. */
  require(): string;
}

export function gate(what: string, found: string | undefined): ToolGate {
  const skip = found === undefined && !deployTestsConfig.CI;
  if (skip) console.warn(`[deploy checks] ${what} not found: skipping its checks (${ENSURE_HINT})`);
  return {
    skip,
    require() {
      if (found === undefined) throw new Error(`${what} not found; ${ENSURE_HINT}`);
      return found;
    },
  };
}

export interface RunResult {
  status: number | null;
  stdout: string;
  stderr: string;
}

export function run(cmd: string, args: string[], options: { cwd?: string; env?: NodeJS.ProcessEnv } = {}): RunResult {
  const r = spawnSync(cmd, args, {
    cwd: options.cwd ?? REPO_ROOT,
    env: options.env,
    encoding: "utf8",
    timeout: 60_000,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (r.error) throw r.error;
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}
