import type { Logger } from "./logger.ts";

// A background job that runs every `intervalMs` (first after `initialDelayMs`), never twice at
// once in one process, and stops cleanly: `stop()` cancels the schedule and waits for a running
// round, which can watch `stopping()` to end early.

export interface PeriodicJob<R> {
  /** One round now; concurrent calls share the running round. */
  runOnce(): Promise<R>;
  stop(): Promise<void>;
}

export interface PeriodicJobOptions<R> {
  /** Names the job in its log lines. */
  name: string;
  logger: Logger;
  intervalMs: number;
  initialDelayMs: number;
  /** false: nothing is scheduled (runOnce still works). */
  enabled: boolean;
  run: (stopping: () => boolean) => Promise<R>;
}

export function startPeriodicJob<R>(options: PeriodicJobOptions<R>): PeriodicJob<R> {
  const { logger } = options;
  let stopping = false;
  let timer: NodeJS.Timeout | undefined;
  let running: Promise<R> | undefined;

  function runOnce(): Promise<R> {
    running ??= options
      .run(() => stopping)
      .finally(() => {
        running = undefined;
      });
    return running;
  }

  function schedule(delayMs: number): void {
    if (stopping) return;
    timer = setTimeout(() => {
      runOnce()
        .catch((err: unknown) => logger.error({ err }, `${options.name} run failed`))
        .finally(() => schedule(options.intervalMs));
    }, delayMs);
    timer.unref();
  }

  if (options.enabled) schedule(options.initialDelayMs);

  return {
    runOnce,
    async stop() {
      stopping = true;
      clearTimeout(timer);
      await running?.catch(() => undefined);
    },
  };
}
