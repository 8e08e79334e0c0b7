import { spawn } from "node:child_process";
import { childEnv, type Env } from "./service-process.ts";

export interface RunScriptOptions {
  entry: string;
  args?: string[];
  env?: Env;
  cwd?: string;
  timeoutMs?: number;
}

export interface ScriptResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

export class ScriptFailedError extends Error {
  override name = "ScriptFailedError";
  readonly result: ScriptResult;
  constructor(message: string, result: ScriptResult) {
    super(message);
    this.result = result;
  }
}

/** Runs a Node script (e.g. a CLI) to completion; rejects on a non-zero exit with its output. */
export function runNodeScript(options: RunScriptOptions): Promise<ScriptResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [options.entry, ...(options.args ?? [])], {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdio: ["ignore", "pipe", "pipe"],
      timeout: options.timeoutMs ?? 60_000,
      killSignal: "SIGKILL",
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (d: string) => (stdout += d));
    child.stderr.setEncoding("utf8").on("data", (d: string) => (stderr += d));
    child.once("error", reject);
    child.once("close", (code, signal) => {
      const result = { code, stdout, stderr };
      if (code === 0) resolve(result);
      else
        reject(
          new ScriptFailedError(
            `${options.entry} ${(options.args ?? []).join(" ")} failed (code ${code}, signal ${signal}):\n${stderr || stdout}`,
            result,
          ),
        );
    });
  });
}
