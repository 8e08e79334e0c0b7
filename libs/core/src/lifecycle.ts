import type { Logger } from "pino";

// Graceful shutdown in the order the guide fixes: stop intake (HTTP listeners, consumers),
// drain work in flight, then close clients (DB, NATS, Redis). Each stage's hooks run
// concurrently; stages run in order; the whole is bounded by a timeout.

export type ShutdownStage = "intake" | "drain" | "clients";
type Hook = { name: string; fn: () => Promise<unknown> | unknown };

export interface LifecycleOptions {
  logger: Logger;
  timeoutMs: number;
  /** Tests replace process exit. */
  exit?: (code: number) => void;
}

export class Lifecycle {
  private readonly hooks: Record<ShutdownStage, Hook[]> = { intake: [], drain: [], clients: [] };
  private stopping: Promise<void> | undefined;
  private readonly options: LifecycleOptions;

  constructor(options: LifecycleOptions) {
    this.options = options;
  }

  on(stage: ShutdownStage, name: string, fn: Hook["fn"]): this {
    this.hooks[stage].push({ name, fn });
    return this;
  }

  get isStopping(): boolean {
    return this.stopping !== undefined;
  }

  /** Installs SIGTERM/SIGINT handlers that run `shutdown`. */
  handleSignals(): this {
    const onSignal = (signal: NodeJS.Signals) => {
      this.options.logger.info({ signal }, "shutdown requested");
      void this.shutdown().then(
        () => (this.options.exit ?? process.exit)(0),
        () => (this.options.exit ?? process.exit)(1),
      );
    };
    process.once("SIGTERM", onSignal);
    process.once("SIGINT", onSignal);
    return this;
  }

  shutdown(): Promise<void> {
    this.stopping ??= this.run();
    return this.stopping;
  }

  private async run(): Promise<void> {
    const { logger, timeoutMs } = this.options;
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`shutdown exceeded ${timeoutMs} ms`)), timeoutMs);
      timer.unref();
    });
    try {
      await Promise.race([this.runStages(), timeout]);
      logger.info("shutdown complete");
    } catch (err) {
      logger.error({ err }, "shutdown failed");
      throw err;
    } finally {
      clearTimeout(timer);
    }
  }

  private async runStages() {
    for (const stage of ["intake", "drain", "clients"] as const) {
      await Promise.all(
        this.hooks[stage].map(async (h) => {
          try {
            await h.fn();
          } catch (err) {
            this.options.logger.warn({ err, stage, hook: h.name }, "shutdown hook failed");
          }
        }),
      );
    }
  }
}
