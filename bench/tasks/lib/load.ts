import { spawn } from "node:child_process";
import path from "node:path";
import { createInterface } from "node:readline";
import { fileURLToPath } from "node:url";
import type { LoadJob, LoadResult } from "../load-client.ts";
import { pauseProbeEnv } from "./tail.ts";

export type { LoadJob, LoadResult };

const CLIENT = fileURLToPath(new URL("../load-client.ts", import.meta.url));

/**
 * Runs one load job in its own process. `onStart`/`onEnd` run when the client opens and closes its
 * measured window, so callers can snapshot CPU and PostgreSQL counters around exactly that window;
 * they get the client's pid, so its own CPU can be shown beside the system's.
 */
export async function runLoad(
  job: LoadJob,
  hooks: {
    onStart?: (clientPid: number) => void | Promise<void>;
    onEnd?: (clientPid: number) => void | Promise<void>;
  } = {},
): Promise<LoadResult> {
  // A job that records its requests (BENCH_PAUSES) logs its own pauses beside them too: a pause of
  // the load client delays the answers it reads, and would pass for the system's (tail.ts).
  const child = spawn(process.execPath, [CLIENT, JSON.stringify(job)], {
    stdio: ["ignore", "pipe", "pipe"],
    env: job.latencyFile ? { ...process.env, ...pauseProbeEnv(path.dirname(job.latencyFile)) } : process.env,
  });
  const pid = child.pid ?? 0;
  let stderr = "";
  child.stderr.on("data", (d: Buffer) => (stderr += d.toString()));
  let result: LoadResult | undefined;
  const pendingHooks: Promise<void>[] = [];
  const lines = createInterface({ input: child.stdout });
  lines.on("line", (line) => {
    let msg: { mark?: string; result?: LoadResult };
    try {
      msg = JSON.parse(line);
    } catch {
      return;
    }
    if (msg.mark === "start" && hooks.onStart) pendingHooks.push(Promise.resolve(hooks.onStart(pid)));
    if (msg.mark === "end" && hooks.onEnd) pendingHooks.push(Promise.resolve(hooks.onEnd(pid)));
    if (msg.result) result = msg.result;
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  await Promise.all(pendingHooks);
  if (!result)
    throw new Error(`load client (${job.mode} ${job.url}) exited ${code} without a result: ${stderr.slice(-2000)}`);
  return result;
}
