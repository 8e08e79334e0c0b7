// Group commit for the statements every run of a worker process makes (claims, checkpoints).
// Nothing waits for a timer: the first item goes out at once; items that arrive while a batch is
// in flight go out together in the next one, as one statement (one round trip, one commit, one
// WAL flush) however many runs they belong to. Alone, an item costs what a single statement
// did; under load a batch holds as many items as arrived during one round trip. If a batch
// statement fails, each of its items is retried on its own, so one bad item fails only its run.
// docs/performance.md "Checkpoints".

export interface GroupCommitOptions<I, O> {
  /** Writes the items with one statement; one result per item, in order. */
  flush: (items: I[]) => Promise<O[]>;
  /** Most items per statement (default 500). */
  maxBatch?: number;
}

interface Pending<I, O> {
  item: I;
  resolve: (result: O) => void;
  reject: (err: unknown) => void;
}

export class GroupCommit<I, O> {
  readonly #flush: (items: I[]) => Promise<O[]>;
  readonly #maxBatch: number;
  #queue: Pending<I, O>[] = [];
  #inFlight = false;

  constructor(options: GroupCommitOptions<I, O>) {
    this.#flush = options.flush;
    this.#maxBatch = options.maxBatch ?? 500;
  }

  submit(item: I): Promise<O> {
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ item, resolve, reject });
      if (this.#inFlight) return;
      this.#inFlight = true;
      // Items submitted in the same tick join this batch.
      queueMicrotask(() => void this.#drain());
    });
  }

  async #drain(): Promise<void> {
    while (this.#queue.length > 0) await this.#write(this.#queue.splice(0, this.#maxBatch));
    this.#inFlight = false;
  }

  async #write(batch: Pending<I, O>[]): Promise<void> {
    try {
      const results = await this.#flush(batch.map((p) => p.item));
      batch.forEach((p, i) => p.resolve(results[i]!));
    } catch (err) {
      if (batch.length === 1) batch[0]!.reject(err);
      else await Promise.all(batch.map((p) => this.#write([p])));
    }
  }
}
