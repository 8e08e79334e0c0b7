import type { JsMsg } from "@nats-io/jetstream";
import { RUN_WORKERS, withMessageContext, type Bus } from "@tog/bus";
import type { Logger } from "@tog/core";
import { openEmitter } from "./open-emitter.ts";
import { runClaimedTask, type RunEnd, type RunnerDeps } from "./run.ts";

// Pulls runs from the RUNS work queue (durable consumer `run-workers`, shared by every worker
// process) and executes up to `concurrency` of them at once. The message is held for the whole
// run (heartbeats extend its ack wait) and acked only once the task is terminal, so a worker
// that dies mid-run has its runs redelivered to another worker, which resumes from the
// checkpoints. The consumer is idempotent: the claim in PostgreSQL decides, not the delivery.

export interface RunWorkerOptions {
  bus: Bus;
  runner: RunnerDeps;
  concurrency: number;
  /** The consumer's ack wait; working() is sent at a third of it. */
  ackWaitMs: number;
  logger: Logger;
  /** Metrics hooks. */
  onRunEnd?: ((end: RunEnd | "duplicate" | "orphan" | "error") => void) | undefined;
}

export interface RunWorker {
  /** Runs in progress. */
  readonly active: number;
  /** Stops pulling, hands running workflows back (lease released, message nak'd), waits for them. */
  stop(): Promise<void>;
}

const MAX_RETRY_DELAY_MS = 5_000;

export async function startRunWorker(options: RunWorkerOptions): Promise<RunWorker> {
  const { bus, runner, logger } = options;
  const consumer = await bus.js.consumers.get(bus.streamName("RUNS"), RUN_WORKERS);
  const shutdown = new AbortController();
  const inflight = new Set<Promise<void>>();
  let slotFreed: (() => void) | undefined;

  const handle = async (msg: JsMsg) => {
    const taskId = msg.subject.slice(msg.subject.lastIndexOf(".") + 1);
    const working = setInterval(() => msg.working(), Math.max(100, Math.floor(options.ackWaitMs / 3)));
    try {
      await withMessageContext(
        msg,
        async () => {
          const claim = await runner.runs.claim(taskId, runner.workerId, runner.leaseMs, runner.timeoutSeconds);
          switch (claim.outcome) {
            case "missing":
              logger.warn({ taskId }, "run without a task (its submit was rolled back): dropped");
              msg.term();
              options.onRunEnd?.("orphan");
              return;
            case "leased":
              msg.nak(claim.retryInMs);
              options.onRunEnd?.("duplicate");
              return;
            case "terminal": {
              // Cancelled while queued, or a duplicate of a finished run: make sure every
              // committed event reached the bus, then drop the message.
              const steps = new Map((await runner.runs.loadSteps(taskId)).map((s) => [s.key, s]));
              const emitter = await openEmitter(runner, taskId, "", steps, logger, () => undefined);
              await emitter.flush();
              msg.ack();
              options.onRunEnd?.("duplicate");
              return;
            }
            case "claimed": {
              const end = await runClaimedTask(runner, claim.task, shutdown.signal);
              if (end === "finished") msg.ack();
              else if (end === "released") msg.nak();
              else msg.nak(runner.leaseMs);
              options.onRunEnd?.(end);
              return;
            }
          }
        },
        { spanName: "run.execute", attributes: { "task.id": taskId } },
      );
    } catch (err) {
      logger.error({ err, taskId }, "run failed; it will be redelivered");
      // Deliveries are unlimited (a run must not be dropped while PostgreSQL is down), so a run
      // that keeps failing backs off instead of spinning.
      msg.nak(Math.min(MAX_RETRY_DELAY_MS, 500 * msg.info.deliveryCount));
      options.onRunEnd?.("error");
    } finally {
      clearInterval(working);
    }
  };

  const loop = (async () => {
    while (!shutdown.signal.aborted) {
      const free = options.concurrency - inflight.size;
      if (free <= 0) {
        await new Promise<void>((resolve) => (slotFreed = resolve));
        continue;
      }
      try {
        const batch = await consumer.fetch({ max_messages: free, expires: 1_000 });
        for await (const msg of batch) {
          const run = handle(msg);
          inflight.add(run);
          void run.finally(() => {
            inflight.delete(run);
            slotFreed?.();
            slotFreed = undefined;
          });
          if (shutdown.signal.aborted) break;
        }
      } catch (err) {
        if (shutdown.signal.aborted) break;
        logger.warn({ err }, "fetching runs failed; retrying");
        await new Promise((r) => setTimeout(r, 1_000));
      }
    }
  })();

  return {
    get active() {
      return inflight.size;
    },
    async stop() {
      shutdown.abort();
      slotFreed?.();
      await loop;
      await Promise.allSettled([...inflight]);
    },
  };
}
