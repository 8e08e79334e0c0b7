import type { NatsConnection } from "@nats-io/nats-core";
import type { Logger } from "@tog/core";
import { systemSubjects } from "@tog/bus";
import type { EventStore } from "../store/event-store.ts";
import { TaskHub } from "./task-hub.ts";

// The hubs of this instance, one per task that has at least one client (plus a short
// linger after the last one leaves, so a reconnecting client finds its hub warm).

export interface HubRegistryOptions {
  nc: NatsConnection;
  prefix: string;
  store: EventStore;
  logger: Logger;
  cacheSize: number;
  readBatch: number;
  /** How long a hub without clients stays open. */
  lingerMs: number;
  /** A hub with clients that heard nothing for this long compares its head with the store. */
  headCheckMs: number;
  onDelivered?: ((count: number) => void) | undefined;
}

export class HubRegistry {
  readonly #options: HubRegistryOptions;
  readonly #hubs = new Map<string, TaskHub>();
  readonly #lingering = new Map<TaskHub, NodeJS.Timeout>();
  readonly #subjects: ReturnType<typeof systemSubjects>;
  readonly #checker: NodeJS.Timeout;
  #closed = false;

  constructor(options: HubRegistryOptions) {
    this.#options = options;
    this.#subjects = systemSubjects(options.prefix);
    this.#checker = setInterval(() => this.#checkIdle(), Math.max(100, Math.floor(options.headCheckMs / 2)));
    this.#checker.unref();
    void this.#watchReconnects();
  }

  get size(): number {
    return this.#hubs.size;
  }

  /** The task's hub, created (and started) on first use; pair with `release`. */
  acquire(taskId: string): TaskHub {
    let hub = this.#hubs.get(taskId);
    if (hub?.isFailed) {
      this.#drop(hub);
      hub = undefined;
    }
    if (!hub) {
      hub = new TaskHub({
        taskId,
        subject: this.#subjects.events(taskId),
        nc: this.#options.nc,
        store: this.#options.store,
        logger: this.#options.logger,
        cacheSize: this.#options.cacheSize,
        readBatch: this.#options.readBatch,
        onDelivered: this.#options.onDelivered,
      });
      const created = hub;
      this.#hubs.set(taskId, created);
      // Right after start a message may have been routed before our subscription existed yet
      // stored after we asked the store: one early check finds it.
      const timer = setTimeout(() => void created.checkHead().catch(() => undefined), 1_000);
      timer.unref();
      created.ready().catch(() => {
        if (this.#hubs.get(taskId) === created) this.#hubs.delete(taskId);
      });
    }
    const timer = this.#lingering.get(hub);
    if (timer) {
      clearTimeout(timer);
      this.#lingering.delete(hub);
    }
    hub.refs++;
    return hub;
  }

  release(hub: TaskHub): void {
    hub.refs = Math.max(0, hub.refs - 1);
    if (hub.refs > 0 || this.#lingering.has(hub)) return;
    if (hub.isFailed || this.#closed) {
      this.#drop(hub);
      return;
    }
    const timer = setTimeout(() => {
      this.#lingering.delete(hub);
      if (hub.refs === 0) this.#drop(hub);
    }, this.#options.lingerMs);
    timer.unref();
    this.#lingering.set(hub, timer);
  }

  #drop(hub: TaskHub): void {
    const timer = this.#lingering.get(hub);
    if (timer) clearTimeout(timer);
    this.#lingering.delete(hub);
    if (this.#hubs.get(hub.taskId) === hub) this.#hubs.delete(hub.taskId);
    hub.close();
  }

  #checkIdle(): void {
    const now = Date.now();
    for (const hub of this.#hubs.values()) {
      if (hub.refs > 0 && hub.terminalSeq === null && hub.idleMs(now) >= this.#options.headCheckMs) {
        hub
          .checkHead()
          .catch((err: unknown) => this.#options.logger.warn({ err, taskId: hub.taskId }, "head check failed"));
      }
    }
  }

  /** Core NATS loses what was published while we were disconnected: every hub checks its head. */
  async #watchReconnects(): Promise<void> {
    try {
      for await (const status of this.#options.nc.status()) {
        if (this.#closed) return;
        if (status.type === "reconnect") {
          for (const hub of this.#hubs.values()) hub.checkHead().catch(() => undefined);
        }
      }
    } catch {
      // status iterator ends when the connection closes
    }
  }

  closeAll(): void {
    this.#closed = true;
    clearInterval(this.#checker);
    for (const hub of [...this.#hubs.values()]) this.#drop(hub);
  }
}
