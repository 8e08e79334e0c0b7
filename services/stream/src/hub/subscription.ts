import type { Logger } from "@tog/core";
import type { HubEvent } from "./hub-event.ts";
import type { HubSubscriber, TaskHub } from "./task-hub.ts";

// One client's subscription to one task, whatever the transport. The transport is a Sink:
// the SSE response or the WebSocket. The subscription tracks the seq cursor, applies the
// `types` filter, ends after the terminal event, and enforces the slow-consumer bound once
// live (during replay it waits for the socket instead: the replay is pulled, not pushed).

export interface Sink {
  /** Writes one event. */
  send(event: HubEvent): void;
  /** Bytes accepted but not yet handed to the kernel (the slow-consumer bound). */
  readonly buffered: number;
  /** The transport's buffer is over its high-water mark: a `drain` will follow. */
  readonly needsDrain: boolean;
  /** Resolves once the transport buffer drained (or the client is gone). */
  drained(): Promise<void>;
  /**
   * The stream of this task is over: `terminal` is its last event (null: the client's
   * resume point was already at or past it); `sent` tells whether the filter let it through.
   */
  finish(terminal: HubEvent | null, sent: boolean): void;
  /** Live and over the buffer bound: drop the client, who resumes from its last event. */
  overflow(): void;
}

export interface SubscriptionOptions {
  taskId: string;
  /** Event types to send; null sends all. */
  filter: ReadonlySet<string> | null;
  /** Replay events with seq greater than this (0 = from the first). */
  resumeAfter: number;
  sink: Sink;
  /** Live only: more buffered than this closes the client. */
  maxBufferBytes: number;
}

export class Subscription implements HubSubscriber {
  readonly taskId: string;
  readonly filter: ReadonlySet<string> | null;
  readonly sink: Sink;
  readonly #maxBufferBytes: number;
  delivered: number;
  /** stream_id of the last event passed (sent or filtered out). */
  deliveredId: string | null = null;
  /** Seq of the last event actually written to the client. */
  sentSeq: number;
  /** stream_id of the last `id:` the client has seen. */
  sentId: string | null = null;
  live = false;
  closed = false;

  constructor(options: SubscriptionOptions) {
    this.taskId = options.taskId;
    this.filter = options.filter;
    this.sink = options.sink;
    this.#maxBufferBytes = options.maxBufferBytes;
    this.delivered = options.resumeAfter;
    this.sentSeq = options.resumeAfter;
  }

  push(event: HubEvent): void {
    if (this.closed) return;
    this.delivered = event.seq;
    this.deliveredId = event.streamId;
    const pass = this.filter === null || this.filter.has(event.type);
    if (pass) {
      this.sink.send(event);
      this.sentSeq = event.seq;
      this.sentId = event.streamId;
    }
    if (event.terminal) {
      this.closed = true;
      this.sink.finish(event, pass);
      return;
    }
    if (this.live && this.sink.buffered > this.#maxBufferBytes) {
      this.closed = true;
      this.sink.overflow();
    }
  }

  /** Replaying and the socket wants no more for now (the hub stops handing it events). */
  get saturated(): boolean {
    return !this.live && this.sink.needsDrain;
  }

  end(): void {
    if (this.closed) return;
    this.closed = true;
    this.sink.finish(null, false);
  }

  /** The client went away (or unsubscribed): stop without writing anything. */
  close(): void {
    this.closed = true;
  }
}

export interface JoinOptions {
  /** Events taken from the hub's memory per step. */
  chunk: number;
  /** A gap the store cannot fill for this long is skipped (logged). */
  gapGiveUpMs: number;
  logger: Logger;
}

/**
 * Replays from the subscriber's position (store, then the hub's memory) and attaches it to the
 * hub's live fan-out once it has caught up. Rejects when the store fails; the caller ends the
 * client's stream (which resumes from its last event).
 */
export async function replayAndAttach(sub: Subscription, hub: TaskHub, options: JoinOptions): Promise<void> {
  let emptySince: number | undefined;
  while (!sub.closed) {
    if (sub.sink.needsDrain) {
      await sub.sink.drained();
      continue;
    }
    const step = hub.tryAttach(sub, options.chunk);
    if (step === "attached") {
      sub.live = true;
      return;
    }
    if (step === "closed") return;
    if (step === "progress") continue;

    const batch = await hub.read(sub.delivered);
    if (sub.closed) return;
    let progressed = false;
    for (const event of batch) {
      if (event.seq <= sub.delivered) continue;
      sub.push(event);
      progressed = true;
      if (sub.closed) return;
      if (sub.sink.needsDrain) await sub.sink.drained();
      if (sub.closed) return;
    }
    if (progressed) {
      emptySince = undefined;
      continue;
    }
    // The store has nothing after our position although the hub is further: those events are
    // on their way into the store (a core message can overtake its own storage). Wait a little;
    // if they never arrive they were lost, and the client continues after the gap.
    emptySince ??= Date.now();
    if (Date.now() - emptySince > options.gapGiveUpMs) {
      const to = hub.firstCached - 1;
      if (to > sub.delivered) {
        options.logger.error(
          { taskId: sub.taskId, from: sub.delivered + 1, to },
          "events missing from every store: skipped for a client",
        );
        sub.delivered = to;
      }
      emptySince = undefined;
      continue;
    }
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
}
