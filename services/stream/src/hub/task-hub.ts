import type { NatsConnection, Subscription as NatsSubscription } from "@nats-io/nats-core";
import type { Logger } from "@tog/core";
import type { EventStore } from "../store/event-store.ts";
import { eventTextsOf } from "@tog/events";
import { decodeHubEvent, type HubEvent } from "./hub-event.ts";

// One hub per task per instance, shared by every client of that task on the instance.
//
// Live events arrive on ONE core NATS subscription to `<prefix>.events.<workflow_id>` (workers
// publish there through JetStream; core subscribers get the same messages without a consumer).
// Each event is decoded and framed once and written to every attached client.
//
// The hub keeps the task's events as one gap-free run ending at `head`, with the most recent
// ones in memory (`cache`). Core NATS is at most once, so a seq jump (a lost message, a NATS
// reconnect) is repaired from the store before later events go out, and a periodic check
// compares `head` with the store so that a lost LAST event is found too.
//
// A client joins by replaying from the store (and the cache) until it reaches `head`, then
// attaches in the same synchronous step: nothing can be emitted between its last replayed event
// and its attachment, so there is no gap and no duplicate at the seam.

export interface HubSubscriber {
  /** Seq of the last event this subscriber has been given (0 = none). */
  readonly delivered: number;
  /** Ended (terminal event, client gone, overflow): no more pushes. */
  readonly closed: boolean;
  /** Joining and its client's buffer is full: hand it nothing more until it drained. */
  readonly saturated?: boolean;
  /** Called in seq order with events whose seq is greater than `delivered`. */
  push(event: HubEvent): void;
  /** The task ended at or before `delivered` (a resume point at or past the end). */
  end(): void;
}

export interface TaskHubOptions {
  taskId: string;
  subject: string;
  nc: NatsConnection;
  store: EventStore;
  logger: Logger;
  /** Most recent events kept in memory for joining clients. */
  cacheSize: number;
  /** Events per store read. */
  readBatch: number;
  /** How long a missing event may stay missing from the store before the hub skips it. */
  repairGiveUpMs?: number;
  /** Live events handed to subscribers (metrics). */
  onDelivered?: ((count: number) => void) | undefined;
}

export type AttachResult = "attached" | "progress" | "store" | "closed";

type State = "starting" | "ready" | "failed" | "closed";

export class TaskHub {
  readonly taskId: string;
  readonly #subject: string;
  readonly #nc: NatsConnection;
  readonly #store: EventStore;
  readonly #logger: Logger;
  readonly #cacheSize: number;
  readonly #readBatch: number;
  readonly #repairGiveUpMs: number;

  #state: State = "starting";
  #ready: Promise<void>;
  #live: NatsSubscription | undefined;
  #head = 0;
  /** Contiguous: cache[i].seq === cacheStart + i, and the last one is `head`. */
  #cache: HubEvent[] = [];
  #cacheStart = 1;
  /** Live events that arrived before the events preceding them. */
  #pending = new Map<number, HubEvent>();
  /** Highest seq known to exist (from live messages or the store). */
  #wanted = 0;
  #terminalSeq: number | null = null;
  #subscribers = new Set<HubSubscriber>();
  #reads = new Map<number, Promise<HubEvent[]>>();
  #repairing: Promise<void> | undefined;
  /** Last live message or head check. */
  #lastActivityAt = Date.now();
  #badMessages = 0;
  /** Subscribers holding the hub (attached or still replaying); the registry closes it at 0. */
  refs = 0;
  readonly #onDelivered: ((count: number) => void) | undefined;

  constructor(options: TaskHubOptions) {
    this.#onDelivered = options.onDelivered;
    this.taskId = options.taskId;
    this.#subject = options.subject;
    this.#nc = options.nc;
    this.#store = options.store;
    this.#logger = options.logger;
    this.#cacheSize = Math.max(1, options.cacheSize);
    this.#readBatch = Math.max(1, options.readBatch);
    this.#repairGiveUpMs = options.repairGiveUpMs ?? 5_000;
    this.#ready = this.#start();
    // Callers await ready(); a failure is reported there, not as an unhandled rejection.
    this.#ready.catch(() => undefined);
  }

  get head(): number {
    return this.#head;
  }

  /** Seq of the oldest event held in memory (head + 1 when none is). */
  get firstCached(): number {
    return this.#cache.length === 0 ? this.#head + 1 : this.#cacheStart;
  }

  get terminalSeq(): number | null {
    return this.#terminalSeq;
  }

  get isFailed(): boolean {
    return this.#state === "failed" || this.#state === "closed";
  }

  get subscriberCount(): number {
    return this.#subscribers.size;
  }

  /** Milliseconds since the last live message or head check. */
  idleMs(now = Date.now()): number {
    return now - this.#lastActivityAt;
  }

  ready(): Promise<void> {
    return this.#ready;
  }

  async #start(): Promise<void> {
    try {
      // Subscribe first, then ask the store where the task stands: an event published in
      // between is both stored and received, never neither.
      this.#live = this.#nc.subscribe(this.#subject, {
        callback: (err, msg) => {
          if (!err) this.#onLive(msg.string());
        },
      });
      await this.#nc.flush();
      const position = await this.#store.position(this.taskId);
      if (this.#state !== "starting") return;
      this.#head = position.lastSeq;
      this.#cacheStart = position.lastSeq + 1;
      if (position.last && position.last.seq === position.lastSeq) this.#append(position.last);
      this.#wanted = Math.max(this.#wanted, this.#head);
      this.#state = "ready";
      this.#drainPending();
      if (this.#wanted > this.#head) this.#repair();
    } catch (err) {
      this.#state = "failed";
      this.#live?.unsubscribe();
      throw err;
    }
  }

  /** One message: the events of one write (docs/decisions.md "One message per write"). */
  #onLive(message: string): void {
    this.#lastActivityAt = Date.now();
    for (const text of eventTextsOf(message)) this.#onLiveEvent(text);
  }

  #onLiveEvent(text: string): void {
    const event = decodeHubEvent(text, this.taskId);
    if (!event) {
      if (this.#badMessages++ % 1000 === 0)
        this.#logger.warn({ taskId: this.taskId }, "ignoring an unreadable event message");
      return;
    }
    if (this.#state === "starting") {
      this.#pending.set(event.seq, event);
      this.#wanted = Math.max(this.#wanted, event.seq);
      return;
    }
    if (this.#state !== "ready") return;
    this.#accept(event);
  }

  #accept(event: HubEvent): void {
    if (event.seq <= this.#head) return;
    if (event.seq === this.#head + 1) {
      this.#append(event);
      this.#drainPending();
      return;
    }
    this.#pending.set(event.seq, event);
    this.#wanted = Math.max(this.#wanted, event.seq);
    this.#repair();
  }

  #append(event: HubEvent): void {
    if (this.#cache.length === 0) this.#cacheStart = event.seq;
    this.#cache.push(event);
    this.#head = event.seq;
    if (this.#head > this.#wanted) this.#wanted = this.#head;
    // Trim in steps, so trimming stays amortized O(1) per event.
    if (this.#cache.length > this.#cacheSize + (this.#cacheSize >> 2)) {
      const drop = this.#cache.length - this.#cacheSize;
      this.#cache.splice(0, drop);
      this.#cacheStart += drop;
    }
    if (event.terminal) {
      this.#terminalSeq = event.seq;
      // Nothing follows a terminal event: stop listening.
      this.#live?.unsubscribe();
      this.#live = undefined;
      this.#pending.clear();
    }
    let delivered = 0;
    for (const sub of this.#subscribers) {
      if (sub.closed) continue;
      if (event.seq > sub.delivered) {
        sub.push(event);
        delivered++;
      } else if (event.terminal) sub.end();
    }
    if (delivered > 0) this.#onDelivered?.(delivered);
  }

  #drainPending(): void {
    if (this.#pending.size === 0) return;
    for (const seq of this.#pending.keys()) if (seq <= this.#head) this.#pending.delete(seq);
    let next = this.#pending.get(this.#head + 1);
    while (next) {
      this.#pending.delete(next.seq);
      this.#append(next);
      next = this.#pending.get(this.#head + 1);
    }
  }

  /** Fetches the missing events between `head` and the highest known seq from the store. */
  #repair(): void {
    if (this.#repairing || this.#state !== "ready") return;
    this.#repairing = (async () => {
      let stuckSince: number | undefined;
      while (this.#state === "ready" && this.#wanted > this.#head && this.#terminalSeq === null) {
        const before = this.#head;
        let batch: HubEvent[];
        try {
          batch = await this.read(this.#head);
        } catch (err) {
          this.#logger.warn({ err, taskId: this.taskId }, "repairing the event sequence failed; retrying");
          batch = [];
        }
        for (const event of batch) this.#accept(event);
        this.#drainPending();
        if (this.#head > before) {
          stuckSince = undefined;
          continue;
        }
        stuckSince ??= Date.now();
        if (Date.now() - stuckSince > this.#repairGiveUpMs) {
          this.#skipGap();
          stuckSince = undefined;
          continue;
        }
        await sleep(50);
      }
    })().finally(() => {
      this.#repairing = undefined;
    });
  }

  /** The store never received the missing events (a lost publish): go on without them. */
  #skipGap(): void {
    const next = Math.min(...this.#pending.keys());
    const to = Number.isFinite(next) ? next - 1 : this.#wanted;
    this.#logger.error({ taskId: this.taskId, from: this.#head + 1, to }, "events missing from every store: skipped");
    this.#head = to;
    this.#cache = [];
    this.#cacheStart = to + 1;
    this.#drainPending();
  }

  /** Compares `head` with the store and repairs when the store is ahead (a lost message). */
  async checkHead(): Promise<void> {
    if (this.#state !== "ready" || this.#terminalSeq !== null) return;
    this.#lastActivityAt = Date.now();
    const position = await this.#store.position(this.taskId);
    if (position.lastSeq > this.#head) {
      this.#wanted = Math.max(this.#wanted, position.lastSeq);
      this.#repair();
    }
  }

  /**
   * Brings `head` up to the store's position when a client resumes past it, and resolves once
   * the hub holds what the store holds. Such a client saw those events from another instance,
   * or from this one just before the live message reached this hub: answering from the stale
   * head would stream a finished task instead of its 204 (docs/decisions.md "Resuming past the
   * hub"). A store that fails leaves the hub as it is: the stream still ends at the terminal event.
   */
  async reach(seq: number): Promise<void> {
    if (seq <= this.#head || this.#terminalSeq !== null || this.#state !== "ready") return;
    try {
      await this.checkHead();
    } catch (err) {
      this.#logger.warn({ err, taskId: this.taskId }, "checking the head for a client ahead of it failed");
      return;
    }
    await this.#repairing;
  }

  /**
   * Moves a joining subscriber forward from the in-memory cache, at most `max` events, and
   * attaches it once it has everything up to `head` — in the same synchronous step.
   * "store": the cache does not reach back to the subscriber's position; read the store.
   */
  tryAttach(sub: HubSubscriber, max: number): AttachResult {
    if (this.#state === "closed" || this.#state === "failed" || sub.closed) return "closed";
    if (this.#state !== "ready") return "store";
    if (sub.delivered >= this.#head) {
      if (this.#terminalSeq !== null) {
        sub.end();
        return "closed";
      }
      this.#subscribers.add(sub);
      return "attached";
    }
    if (this.#cache.length === 0 || sub.delivered + 1 < this.#cacheStart) return "store";
    const from = sub.delivered + 1 - this.#cacheStart;
    const to = Math.min(this.#cache.length, from + max);
    for (let i = from; i < to && !sub.closed && !sub.saturated; i++) {
      const event = this.#cache[i]!;
      if (event.seq > sub.delivered) sub.push(event);
    }
    if (sub.closed) return "closed";
    if (sub.delivered >= this.#head) {
      this.#subscribers.add(sub);
      return "attached";
    }
    return "progress";
  }

  detach(sub: HubSubscriber): void {
    this.#subscribers.delete(sub);
  }

  /**
   * Events after `afterSeq` from the store. Concurrent reads of the same position share one
   * store request (a crowd of clients joining from the start costs one read), and a batch that
   * ends right before the cache extends the cache backwards for the next joiner.
   */
  read(afterSeq: number): Promise<HubEvent[]> {
    let pending = this.#reads.get(afterSeq);
    if (!pending) {
      pending = this.#store.readAfter(this.taskId, afterSeq, this.#readBatch).then((events) => {
        this.#extendCache(events);
        return events;
      });
      const forget = () => this.#reads.delete(afterSeq);
      pending.then(forget, forget);
      this.#reads.set(afterSeq, pending);
    }
    return pending;
  }

  #extendCache(events: HubEvent[]): void {
    const last = events.at(-1);
    if (!last || this.#cache.length === 0 || last.seq + 1 !== this.#cacheStart) return;
    const room = this.#cacheSize - this.#cache.length;
    if (room <= 0) return;
    const tail = events.slice(-room);
    for (let i = 1; i < tail.length; i++) if (tail[i]!.seq !== tail[i - 1]!.seq + 1) return;
    this.#cache = tail.concat(this.#cache);
    this.#cacheStart = tail[0]!.seq;
  }

  close(): void {
    if (this.#state === "closed") return;
    this.#state = "closed";
    this.#live?.unsubscribe();
    this.#live = undefined;
    this.#subscribers.clear();
    this.#pending.clear();
    this.#cache = [];
  }
}

function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
