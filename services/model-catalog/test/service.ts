import { spawn, type ChildProcess } from "node:child_process";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

// Runs the real service as an OS process, as production does.

const ROOT = fileURLToPath(new URL("../../../", import.meta.url));
const MAIN = "services/model-catalog/src/main.ts";

export interface RunningService {
  url: string;
  output: () => string;
  stop: () => Promise<void>;
}

export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const address = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (address === null || typeof address === "string") throw new Error("no port");
  return address.port;
}

/** Only what we pass: no provider key of the developer's shell leaks into a test. */
function childEnv(env: Record<string, string>): Record<string, string> {
  return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "", NODE_ENV: "test", METRICS_PORT: "0", ...env };
}

function spawnService(env: Record<string, string>): { child: ChildProcess; output: () => string } {
  const child = spawn(process.execPath, [MAIN], { cwd: ROOT, env: childEnv(env), stdio: ["ignore", "pipe", "pipe"] });
  let out = "";
  child.stdout?.on("data", (d: Buffer) => (out += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (out += d.toString()));
  return { child, output: () => out };
}

export async function startService(env: Record<string, string> = {}): Promise<RunningService> {
  const port = await freePort();
  const { child, output } = spawnService({ HOST: "127.0.0.1", PORT: String(port), ...env });
  await new Promise<void>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`service did not start:\n${output()}`)), 15_000);
    const check = () => {
      if (output().includes("model catalog listening")) {
        clearTimeout(timer);
        resolve();
      }
    };
    child.stdout?.on("data", check);
    child.once("exit", (code) => {
      clearTimeout(timer);
      reject(new Error(`service exited with ${code}:\n${output()}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}`,
    output,
    stop: async () => {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGTERM");
      await exited;
    },
  };
}

/** Runs the service expecting it to refuse to start; returns its exit code and output. */
export async function failedStart(env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  const port = await freePort();
  const { child, output } = spawnService({ HOST: "127.0.0.1", PORT: String(port), ...env });
  const timer = setTimeout(() => child.kill("SIGKILL"), 15_000);
  const code = await new Promise<number | null>((resolve) => child.once("exit", (c) => resolve(c)));
  clearTimeout(timer);
  return { code, output: output() };
}
