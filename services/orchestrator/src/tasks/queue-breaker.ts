import { OverloadedError, type Logger } from "@tog/core";

// Fails submissions fast while the run queue (NATS) is known to be unreachable. Without it every
// submit held a PostgreSQL connection for the whole publish timeout, the small pool ran dry and
// later submits waited past the gateway's deadline (502) instead of being refused (503 with
// Retry-After). One failed publish opens it; a background ping closes it as soon as NATS answers
// again (docs/reliability.md "NATS").

export interface QueueBreakerOptions {
  /** Resolves when NATS answers within `timeoutMs`. */
  ping: (timeoutMs: number) => Promise<unknown>;
  logger: Logger;
  /** Pause between pings while open (default 250 ms). */
  probeEveryMs?: number;
}

export class QueueBreaker {
  readonly #ping: QueueBreakerOptions["ping"];
  readonly #logger: Logger;
  readonly #probeEveryMs: number;
  #open = false;

  constructor(options: QueueBreakerOptions) {
    this.#ping = options.ping;
    this.#logger = options.logger;
    this.#probeEveryMs = options.probeEveryMs ?? 250;
  }

  get open(): boolean {
    return this.#open;
  }

  /** Throws the 503 a submit answers while the queue is away. */
  assertClosed(): void {
    if (this.#open) throw new OverloadedError("Task queue unavailable");
  }

  /** A publish failed for lack of NATS: refuse submits until it answers again. */
  trip(err: unknown): void {
    if (this.#open) return;
    this.#open = true;
    this.#logger.warn({ err }, "run queue unreachable: refusing submissions until NATS answers again");
    void this.#probe();
  }

  async #probe(): Promise<void> {
    while (this.#open) {
      await new Promise((r) => setTimeout(r, this.#probeEveryMs).unref());
      try {
        await this.#ping(1_000);
        this.#open = false;
        this.#logger.info("run queue reachable again: accepting submissions");
      } catch {
        // still away
      }
    }
  }
}
