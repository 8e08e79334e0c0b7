// Why a run stops before its flow returns, as one AbortSignal with a typed reason.
//
// Cancellation, the deadline, worker shutdown and lease loss all reach the flow that way
// (run-watch.ts raises them; final-write.ts turns cancel and timeout into the task's terminal
// state).

export type StopReason =
  | { kind: "cancel"; reason: string | null }
  | { kind: "timeout" }
  | { kind: "shutdown" }
  | { kind: "lost"; error?: Error };

/** The abort reason a flow sees when its run is stopped. */
export class StopSignal extends Error {
  readonly stop: StopReason;
  constructor(stop: StopReason) {
    // The text is what a cancelled child's step keeps in the timeline: unchanged since the API shipped.
    super(`workflow stopped: ${stop.kind}`);
    this.name = "AbortError";
    this.stop = stop;
  }
}

/** Throws the stop (or the abort a failed sibling caused) once `signal` is aborted. */
export function throwIfStopped(signal: AbortSignal): void {
  if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new StopSignal({ kind: "shutdown" });
}

/** The run's root AbortSignal: the first stop wins; a flow failure aborts without a stop reason. */
export class RunStops {
  readonly #root = new AbortController();

  get signal(): AbortSignal {
    return this.#root.signal;
  }

  /** The stop that aborted the run, if a stop (not a flow failure) did. */
  get reason(): StopReason | undefined {
    const reason: unknown = this.#root.signal.reason;
    return reason instanceof StopSignal ? reason.stop : undefined;
  }

  stop(reason: StopReason): void {
    if (!this.#root.signal.aborted) this.#root.abort(new StopSignal(reason));
  }

  /** Stops the flow's siblings still running after one of its calls failed. */
  abortAfterFailure(): void {
    if (!this.#root.signal.aborted) this.#root.abort(new Error("workflow failed"));
  }
}
