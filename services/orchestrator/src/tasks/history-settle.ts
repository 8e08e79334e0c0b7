import { setTimeout as sleep } from "node:timers/promises";
import { isTerminalEvent } from "@tog/events";

// A task's final status is committed before its last events are in the permanent log: the final
// write commits, then the terminal event is published, then the event persister stores it with
// its batch. A client that saw the final status and then reads the history expects all of it,
// so a read of a task that finished moments ago first waits, briefly and boundedly, for the
// terminal event to be stored (docs/decisions.md "Event history after the final status"). Older
// tasks, and tasks still running, are read at once.

export interface HistorySettleOptions {
  /** The JSON text of the task's stored event with the highest seq, or null. */
  lastEvent: (taskId: string) => Promise<string | null>;
  /** Only tasks that finished less than this long ago are waited for. */
  windowMs?: number;
  /** The longest a read waits. */
  maxWaitMs?: number;
  pollMs?: number;
}

/**
 * Resolves once the task's terminal event is stored: "stored" when it already was, "waited"
 * when it was not at first (read the history again), "old" for a task outside the window.
 */
export async function terminalEventStored(
  taskId: string,
  completedAt: Date | null,
  options: HistorySettleOptions,
): Promise<"stored" | "waited" | "old"> {
  const { windowMs = 10_000, maxWaitMs = 1_000, pollMs = 20 } = options;
  if (!completedAt || Date.now() - completedAt.getTime() > windowMs) return "old";
  const until = Date.now() + maxWaitMs;
  for (let first = true; ; first = false) {
    const last = await options.lastEvent(taskId);
    if (last !== null && isTerminalEvent(JSON.parse(last) as { type: string; data?: unknown }))
      return first ? "stored" : "waited";
    if (Date.now() >= until) return "waited";
    await sleep(pollMs);
  }
}
