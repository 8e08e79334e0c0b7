import type { Logger } from "@tog/core";
import type { ClaimedTask, RunRepository } from "./run.repository.ts";
import type { SignalListener } from "./signal-listener.ts";
import type { RunStops } from "./stop-reason.ts";

// Turns what stops a run from outside its flow into its StopReason, for as long as the run lasts.
//
// A cancel (found by the claim, the task's signal hint or the lease heartbeat), the task's
// deadline, the worker's shutdown and a lost lease. The lease is kept alive by the process's one
// heartbeat (lease-keeper.ts); each of these raises its StopReason (stop-reason.ts) on the run.

export interface RunWatchOptions {
  runs: RunRepository;
  signals: SignalListener;
  claimed: ClaimedTask;
  workerId: string;
  leaseMs: number;
  /** The worker process's shutdown. */
  shutdown: AbortSignal;
  stops: RunStops;
  /** Called on every signal hint (an approval decision wakes its waiting step). */
  wakers: Set<() => void>;
  log: Logger;
}

export interface RunWatch {
  /**
   * The cancel check started by the last signal hint: the final write waits for it, so a cancel
   * that reached this worker before the run's last step was checkpointed is honoured.
   */
  lastCancelCheck(): Promise<void>;
  /** Stops watching and renewing the lease. */
  release(): void;
}

export function watchRun(options: RunWatchOptions): RunWatch {
  const { runs, claimed, stops, shutdown, log } = options;
  const checkCancel = async () => {
    const state = await runs.cancelState(claimed.id);
    if (state.cancelRequested) stops.stop({ kind: "cancel", reason: state.cancelReason });
  };
  let cancelCheck: Promise<void> = Promise.resolve();
  const unlisten = options.signals.listen(claimed.id, () => {
    for (const wake of options.wakers) wake();
    cancelCheck = checkCancel().catch((err: unknown) => log.warn({ err }, "reading the cancel state failed"));
  });

  const onShutdown = () => stops.stop({ kind: "shutdown" });
  shutdown.addEventListener("abort", onShutdown, { once: true });
  if (shutdown.aborted) onShutdown();
  if (claimed.cancelRequested) stops.stop({ kind: "cancel", reason: claimed.cancelReason });

  const deadlineIn = claimed.deadlineAt.getTime() - Date.now();
  const deadline = setTimeout(() => stops.stop({ kind: "timeout" }), Math.max(0, deadlineIn));
  const releaseLease = runs.holdLease(claimed.id, options.workerId, options.leaseMs, {
    onRenewed: (state) => {
      if (state.cancelRequested) stops.stop({ kind: "cancel", reason: state.cancelReason });
    },
    onLost: () => stops.stop({ kind: "lost" }),
    onError: (err) => log.warn({ err }, "lease heartbeat failed"),
  });

  return {
    lastCancelCheck: () => cancelCheck,
    release() {
      clearTimeout(deadline);
      releaseLease();
      shutdown.removeEventListener("abort", onShutdown);
      unlisten();
    },
  };
}
