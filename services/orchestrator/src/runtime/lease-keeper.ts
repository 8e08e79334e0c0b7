// Keeps the leases of every run a worker process holds alive with one statement per tick,
// however many runs there are: the lease is short (seconds, so a crashed worker's runs are
// taken over quickly: docs/reliability.md "Worker crash"), which makes one heartbeat per run
// and tick too many round trips. A run whose row no longer names this owner has lost its
// lease; a pending cancellation is reported on the same row.

export interface LeaseState {
  cancelRequested: boolean;
  cancelReason: string | null;
}

export interface LeaseHolder {
  /** After each renewal that still found the lease ours. */
  onRenewed(state: LeaseState): void;
  /** The lease is gone (another worker took the run over, or the task is no longer RUNNING). */
  onLost(): void;
  /** The renewal failed (database unreachable): the lease may still be ours; the next tick tries again. */
  onError(err: unknown): void;
}

export interface LeaseKeeperOptions {
  /** Extends the leases of `taskIds`; returns the state of those still held, by task id (lower case). */
  renew: (taskIds: string[]) => Promise<Map<string, LeaseState>>;
  intervalMs: number;
}

export class LeaseKeeper {
  readonly #renew: LeaseKeeperOptions["renew"];
  readonly #intervalMs: number;
  readonly #holders = new Map<string, LeaseHolder>();
  #timer: NodeJS.Timeout | undefined;
  #renewing = false;

  constructor(options: LeaseKeeperOptions) {
    this.#renew = options.renew;
    this.#intervalMs = options.intervalMs;
  }

  get held(): number {
    return this.#holders.size;
  }

  /** Renews `taskId`'s lease until the returned function is called. */
  hold(taskId: string, holder: LeaseHolder): () => void {
    const id = taskId.toLowerCase();
    this.#holders.set(id, holder);
    this.#timer ??= setInterval(() => void this.#tick(), this.#intervalMs);
    return () => {
      if (this.#holders.get(id) === holder) this.#holders.delete(id);
      if (this.#holders.size === 0 && this.#timer) {
        clearInterval(this.#timer);
        this.#timer = undefined;
      }
    };
  }

  async #tick(): Promise<void> {
    // A renewal slower than the interval (database stalled) is not stacked on.
    if (this.#renewing || this.#holders.size === 0) return;
    this.#renewing = true;
    const holders = new Map(this.#holders);
    try {
      const alive = await this.#renew([...holders.keys()]);
      for (const [id, holder] of holders) {
        // Released while the statement ran: its run ended, nothing to report.
        if (this.#holders.get(id) !== holder) continue;
        const state = alive.get(id);
        if (state) holder.onRenewed(state);
        else holder.onLost();
      }
    } catch (err) {
      for (const holder of holders.values()) holder.onError(err);
    } finally {
      this.#renewing = false;
    }
  }
}
