// Batches the calls of one method without a timer (docs/performance.md "Submit"): a call goes
// out at once while fewer than `maxInFlight` calls are in flight; calls made meanwhile wait and
// go out together when one returns. Alone, a call costs what it did unbatched; under load one
// RPC carries as many calls as arrived during one round trip, and its gRPC and HTTP/2 work is
// shared by all of them. Each item is settled as soon as its own outcome arrives. A call in
// flight longer than `stallMs` stops counting, so one stuck call (an orchestrator that hangs)
// holds the calls behind it back for no longer than that.

/** The outcome of one item: its result or its own error. */
export type Settled<O> = { ok: true; value: O } | { ok: false; error: unknown };

export interface CallBatcherOptions<I, O> {
  /**
   * Sends the items (one or more) in one call and reports each item's outcome by its index as
   * it arrives. Items without an outcome when it settles fail: with its error if it rejects.
   */
  send: (items: I[], settle: (index: number, outcome: Settled<O>) => void) => Promise<void>;
  /** Calls in flight at once (≥ 1). */
  maxInFlight: number;
  /** Most items per call. */
  maxBatch: number;
  /** After this long in flight a call no longer counts against maxInFlight. */
  stallMs: number;
}

interface Pending<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (err: unknown) => void;
  settled: boolean;
}

export class CallBatcher<I, O> {
  readonly #send: CallBatcherOptions<I, O>["send"];
  readonly #maxInFlight: number;
  readonly #maxBatch: number;
  readonly #stallMs: number;
  #queue: Pending<I, O>[] = [];
  #inFlight = 0;

  constructor(options: CallBatcherOptions<I, O>) {
    this.#send = options.send;
    this.#maxInFlight = Math.max(1, options.maxInFlight);
    this.#maxBatch = Math.max(1, options.maxBatch);
    this.#stallMs = options.stallMs;
  }

  add(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject, settled: false });
      this.#pump();
    });
  }

  #pump(): void {
    while (this.#queue.length > 0 && this.#inFlight < this.#maxInFlight) {
      const batch = this.#queue.splice(0, this.#maxBatch);
      this.#inFlight++;
      let counted = true;
      const uncount = () => {
        if (!counted) return;
        counted = false;
        this.#inFlight--;
        this.#pump();
      };
      const stalled = setTimeout(uncount, this.#stallMs);
      void this.#call(batch).finally(() => {
        clearTimeout(stalled);
        uncount();
      });
    }
  }

  async #call(batch: Pending<I, O>[]): Promise<void> {
    const settle = (index: number, outcome: Settled<O>) => {
      const p = batch[index];
      if (!p || p.settled) return;
      p.settled = true;
      if (outcome.ok) p.resolve(outcome.value);
      else p.reject(outcome.error);
    };
    let failure: unknown;
    try {
      await this.#send(
        batch.map((p) => p.item),
        settle,
      );
    } catch (err) {
      failure = err;
    }
    batch.forEach((p, i) => {
      if (!p.settled)
        settle(i, { ok: false, error: failure ?? new Error(`no outcome for item ${i} of ${batch.length}`) });
    });
  }
}
