import { JetStreamApiError } from "@nats-io/jetstream";
import { publish, systemSubjects, type Bus } from "@tog/bus";
import { OverloadedError } from "@tog/core";
import type { QueueBreaker } from "./queue-breaker.ts";

// Queues a task's run on the RUNS stream from inside the submit's transaction, and decides what
// a submit answers when that fails (docs/reliability.md "NATS", "Overload").

const MAX_MESSAGES_EXCEEDED = 10077;

/**
 * After the queue refused a run as full, submits are refused without a transaction for this long:
 * under overload most submits would otherwise each take a PostgreSQL transaction only to learn
 * the queue is still full, and that work starved the workers draining it (docs/reliability.md
 * "Overload"). Short against the workers' pace, so the queue refills within one hold.
 */
const QUEUE_FULL_HOLD_MS = 100;

/**
 * One publish attempt, and all of them together: inside the gateway's gRPC deadline (5 s), so a
 * submit never hangs past it. Attempts repeat only while NATS itself answers: a cluster that lost
 * the server leading RUNS elects a new leader within seconds, and the run's message id makes a
 * repeated publish store it once.
 */
const ATTEMPT_TIMEOUT_MS = 1_000;
const BUDGET_MS = 4_000;
const PING_TIMEOUT_MS = 300;
const RETRY_PAUSE_MS = 100;
const MIN_ATTEMPT_MS = 100;

export interface RunQueueOptions {
  bus: Bus;
  /** Refuses submits at once while NATS is known to be away (queue-breaker.ts). */
  breaker?: QueueBreaker | undefined;
}

export class RunQueue {
  readonly #bus: Bus;
  readonly #breaker: QueueBreaker | undefined;
  #fullUntil = 0;

  constructor(options: RunQueueOptions) {
    this.#bus = options.bus;
    this.#breaker = options.breaker;
  }

  /** Throws the 503 a submit answers without trying while the queue is away or full. */
  assertAccepting(): void {
    this.#breaker?.assertClosed();
    if (performance.now() < this.#fullUntil) throw new OverloadedError("System overloaded");
  }

  async enqueue(taskId: string): Promise<void> {
    const subject = systemSubjects(this.#bus.prefix).runs(taskId);
    const started = performance.now();
    for (;;) {
      // Again on each attempt: a submit that waited for a pool connection while the breaker opened
      // must not wait out another publish timeout (it would pass the caller's deadline).
      this.#breaker?.assertClosed();
      const left = BUDGET_MS - (performance.now() - started);
      try {
        await publish(this.#bus, subject, new Uint8Array(0), {
          msgID: taskId,
          timeoutMs: Math.min(ATTEMPT_TIMEOUT_MS, left),
        });
        return;
      } catch (err) {
        if (err instanceof JetStreamApiError && err.code === MAX_MESSAGES_EXCEEDED) {
          this.#fullUntil = performance.now() + QUEUE_FULL_HOLD_MS;
          throw new OverloadedError("System overloaded", { cause: err });
        }
        if (!(await this.#natsAnswers())) {
          // NATS gone or paused: refuse within the caller's deadline; the client retries (same
          // Idempotency-Key) once the queue is back.
          this.#breaker?.trip(err);
          throw new OverloadedError("Task queue unavailable", { cause: err });
        }
        if (BUDGET_MS - (performance.now() - started) > RETRY_PAUSE_MS + MIN_ATTEMPT_MS) {
          await new Promise((r) => setTimeout(r, RETRY_PAUSE_MS));
          continue;
        }
        throw new OverloadedError("Task queue unavailable", { cause: err });
      }
    }
  }

  async #natsAnswers(): Promise<boolean> {
    try {
      await this.#bus.ping(PING_TIMEOUT_MS);
      return true;
    } catch {
      return false;
    }
  }
}
