import { createInterface } from "node:readline/promises";
import type { StreamOptions, TogClient, TogEvent } from "@tog/sdk";
import { EXIT, exitCodeOfStatus } from "./exit-codes.ts";
import { LiveView } from "./live-view.ts";
import type { Output } from "./output.ts";

// `tog submit --follow` and `tog stream`: the live view of one task until its terminal event,
// resumed across dropped connections by the SDK. Ctrl-C asks whether to cancel the task.

export interface FollowOptions {
  transport?: StreamOptions["transport"];
  types?: StreamOptions["types"];
  lastEventId?: string | undefined;
  /** Print the task's result after the terminal event. */
  showResult: boolean;
}

async function askToCancel(out: Output, taskId: string): Promise<boolean> {
  if (!process.stdin.isTTY) return false;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    const answer = await rl.question(`\nCancel task ${taskId}? [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}

export async function follow(client: TogClient, out: Output, taskId: string, options: FollowOptions): Promise<number> {
  const ctrl = new AbortController();
  const view = new LiveView({ write: (t) => out.stdout.write(t), tty: out.tty && !out.json, color: out.color });
  let interrupted = false;
  let cancelRequested = false;
  let prompting = false;
  const onSigint = async () => {
    if (prompting || out.json || !process.stdin.isTTY) {
      interrupted = true;
      ctrl.abort();
      return;
    }
    prompting = true;
    view.finish();
    const cancel = await askToCancel(out, taskId).catch(() => false);
    prompting = false;
    if (cancel) {
      const r = await client.tasks.cancel(taskId, "cancelled from tog");
      cancelRequested = true;
      view.line(r.accepted ? "✗ cancellation requested; waiting for the task to stop…" : `task already ${r.status}`);
    } else {
      interrupted = true;
      ctrl.abort();
    }
  };
  process.on("SIGINT", onSigint);
  const ticker = setInterval(() => view.drawStatus(), 1_000);
  let last: TogEvent | undefined;
  try {
    for await (const e of client.stream(taskId, {
      transport: options.transport,
      types: options.types,
      lastEventId: options.lastEventId,
      signal: ctrl.signal,
      onReconnect: (info) => {
        if (!out.json) view.reconnecting(info.reason);
      },
    })) {
      last = e;
      if (out.json) out.stdout.write(`${JSON.stringify(e)}\n`);
      else if (!prompting) view.event(e);
    }
  } catch (err) {
    if (!interrupted) throw err;
  } finally {
    clearInterval(ticker);
    process.off("SIGINT", onSigint);
    view.finish();
  }
  if (interrupted) {
    out.stderr.write(
      `\nStopped following; task ${taskId} ${cancelRequested ? "is being cancelled" : "continues"}. Follow again: tog stream ${taskId}\n`,
    );
    return EXIT.INTERRUPTED;
  }
  void last;
  const task = await client.tasks.get(taskId);
  if (options.showResult) {
    if (out.json) out.stdout.write(`${JSON.stringify(task)}\n`);
    else {
      out.stdout.write(`\n${task.status.replace("TASK_STATUS_", "")}${task.error ? `: ${task.error}` : ""}\n`);
      if (task.result !== undefined) out.stdout.write(`\n${task.result}\n`);
      if (task.usage)
        out.stdout.write(
          `\n${task.usage.total_tokens} tokens${task.usage.estimated_cost !== undefined ? ` · $${task.usage.estimated_cost.toFixed(6)}` : ""}${task.model_used ? ` · ${task.model_used}` : ""}\n`,
        );
    }
  }
  return exitCodeOfStatus(task.status);
}
