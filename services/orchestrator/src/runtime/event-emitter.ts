import type { Logger } from "@tog/core";
import { ConflictError } from "@tog/core";
import { publish, systemSubjects, type Bus } from "@tog/bus";
import {
  buildEvent,
  eventMessageId,
  eventsMessageId,
  eventsMessageOf,
  type EventType,
  type TaskEvent,
} from "@tog/events";
import type { PendingEvent } from "./flow-context.ts";
import type { StepRecord } from "./run.repository.ts";

// One emitter per running task. It is the only writer of the task's event subject:
// seqs are allocated here in emit order and every publish carries
// `expect.lastSubjectSequence` (the stream sequence of this writer's previous message), so a
// second writer — a worker that lost its lease but has not noticed — is refused by JetStream
// instead of interleaving seqs. Publishes are chained, so seq order is publish order.
//
// Lazy steps (flow-context.ts) are staged here: their events take their seqs at once but are
// neither written nor published until the next commit writes them with its own step (or the
// final write with the final state), or a live event forces them out first. So an event is
// published only after every event before it is written or published: seqs stay gap-free across
// a crash, which simply redoes the lazy steps (docs/performance.md "Lazy steps"). A deferred
// step (flow-context.ts) is staged the same way; `writeDeferred` writes it before the next step
// with effects starts.
//
// Live events are held until the event loop's next turn: a step that finishes within the turn
// it emitted them in (a fast model, an in-process tool) carries them in its own record, so they
// are written and published with its events; otherwise they go out then, with the staged steps
// when there are any, else on their own: into the permanent log first (fenced by the lease, like
// a write), then published together (docs/performance.md "Live events held for one turn", "The
// log before the bus"). Every event is thus in the log before it is on the bus.

const encoder = new TextEncoder();

export interface EmitterStart {
  /** Highest seq already published or committed; the next event gets lastSeq + 1. */
  lastSeq: number;
  /** Stream sequence of the last message on the task's subject (0 = none retained). */
  lastStreamSeq: number;
}

export interface EventEmitterOptions {
  bus: Bus;
  taskId: string;
  traceId: string;
  defaultAgentId: string;
  start: EmitterStart;
  logger: Logger;
  /** Called once when a publish fails (fenced or bus error): the run must stop. */
  onFailure: (error: Error) => void;
  /** Called after each published event (metrics). */
  onPublished?: ((event: TaskEvent) => void) | undefined;
  /** Writes staged lazy steps when a live event has to go out before the next commit. */
  writeStaged?: ((steps: StepRecord[]) => Promise<void>) | undefined;
  /**
   * Puts live events that go out on their own into the permanent log under the run's lease
   * (rejects when it no longer holds). Without it (no lease: a terminal task's leftovers) they
   * are published one by one, each fenced on the one before.
   */
  logLive?: ((events: TaskEvent[]) => Promise<void>) | undefined;
  /** One message per event, as earlier releases published (EVENT_MESSAGES=per-event). */
  perEvent?: boolean | undefined;
}

export class TaskEventEmitter {
  readonly #bus: Bus;
  readonly #subject: string;
  readonly #taskId: string;
  readonly #traceId: string;
  readonly #defaultAgentId: string;
  readonly #logger: Logger;
  readonly #onFailure: (error: Error) => void;
  readonly #onPublished: ((event: TaskEvent) => void) | undefined;
  readonly #writeStaged: ((steps: StepRecord[]) => Promise<void>) | undefined;
  readonly #logLive: ((events: TaskEvent[]) => Promise<void>) | undefined;
  readonly #perEvent: boolean;
  #staged: StepRecord[] = [];
  /** Live events built (seqs taken) but not yet queued; every seq here is above every staged one. */
  #held: TaskEvent[] = [];
  #releaseScheduled = false;
  /** A deferred step is among the staged ones. */
  #deferred = false;
  #lastSeq: number;
  #lastStreamSeq: number;
  #chain: Promise<void> = Promise.resolve();
  #failure: Error | undefined;
  #closed = false;

  constructor(options: EventEmitterOptions) {
    this.#bus = options.bus;
    this.#taskId = options.taskId;
    this.#subject = systemSubjects(options.bus.prefix).events(options.taskId);
    this.#traceId = options.traceId;
    this.#defaultAgentId = options.defaultAgentId;
    this.#logger = options.logger;
    this.#onFailure = options.onFailure;
    this.#onPublished = options.onPublished;
    this.#writeStaged = options.writeStaged;
    this.#logLive = options.logLive;
    this.#perEvent = options.perEvent ?? false;
    this.#lastSeq = options.start.lastSeq;
    this.#lastStreamSeq = options.start.lastStreamSeq;
  }

  get lastSeq(): number {
    return this.#lastSeq;
  }

  get failure(): Error | undefined {
    return this.#failure;
  }

  /** After close, live events are dropped silently (late progress of aborted children). */
  close(): void {
    this.#closed = true;
  }

  /** Builds events with the next seqs (not yet queued). */
  build(pendingEvents: readonly PendingEvent[], at = Date.now()): TaskEvent[] {
    return pendingEvents.map((p) =>
      buildEvent({
        workflow_id: this.#taskId,
        type: p.type as EventType,
        agent_id: p.agent_id ?? this.#defaultAgentId,
        message: p.message,
        seq: ++this.#lastSeq,
        trace_id: this.#traceId,
        data: p.data as never,
        at,
      }),
    );
  }

  /** Live event: at most once per attempt, published in order. */
  emit(event: PendingEvent): void {
    if (this.#closed || this.#failure) return;
    this.#held.push(...this.build([event]));
    if (this.#releaseScheduled) return;
    this.#releaseScheduled = true;
    setImmediate(() => {
      this.#releaseScheduled = false;
      this.#release();
    });
  }

  /**
   * Queues the held live events: with the staged steps when there are any (they join the last
   * one's record, so one write stores them and one round trip publishes them all), else on their
   * own: logged under the lease, then published in one round trip.
   */
  #release(): void {
    if (this.#held.length === 0) return;
    if (this.#failure || this.#closed) {
      this.#held = [];
      return;
    }
    if (this.#staged.length > 0 && this.#writeStaged) {
      this.#holdIn(this.#staged.at(-1)!);
      this.#flushStaged();
      return;
    }
    const log = this.#logLive;
    if (log) {
      const events = this.#held.splice(0);
      this.#enqueue(async () => {
        await log(events);
        await this.#publish(events);
      });
      return;
    }
    for (const event of this.#held.splice(0)) this.#enqueue(() => this.#publish([event]));
  }

  /** The held events join a record not yet written, in seq order with its own. */
  #holdIn(record: StepRecord): void {
    const held = this.#held.splice(0);
    if (held.length === 0) return;
    const own = record.events ?? [];
    const events = own.length > 0 && own[0]!.seq < held[0]!.seq ? [...own, ...held] : [...held, ...own];
    record.events = events;
    record.firstSeq = events[0]!.seq;
    record.lastSeq = events.at(-1)!.seq;
  }

  /**
   * Events committed with a checkpoint: `write` stores them (with their seqs) in PostgreSQL,
   * then they are published. Runs in the chain, so nothing emitted later overtakes them.
   */
  commit<T>(
    events: readonly PendingEvent[],
    write: (built: TaskEvent[], staged: StepRecord[]) => Promise<T>,
    options: { final?: boolean } = {},
  ): Promise<T> {
    if (this.#failure) return Promise.reject(this.#failure);
    let held: TaskEvent[] = [];
    if (!options.final) held = this.#held.splice(0);
    else if (this.#staged.length > 0) this.#holdIn(this.#staged.at(-1)!);
    // The final write's own record holds only the terminal event: with nothing staged to carry
    // them, held events go out alone before it.
    else this.#release();
    if (options.final) this.#closed = true;
    const staged = this.#staged.splice(0);
    this.#deferred = false;
    const built = [...held, ...this.build(events)];
    let result!: T;
    const done = this.#enqueue(async () => {
      result = await write(built, staged);
      await this.#publish([...staged.flatMap((step) => step.events ?? []), ...built]);
    });
    return done.then(() => result);
  }

  /**
   * A lazy step: its events take the next seqs now; the step and its events are written by the
   * next commit (its `staged` argument) or before the next live event, and published after that.
   */
  stage(
    events: readonly PendingEvent[],
    toRecord: (built: TaskEvent[]) => StepRecord,
    options: { deferred?: boolean | undefined } = {},
  ): StepRecord {
    if (this.#failure) throw this.#failure;
    const record = toRecord(this.build(events));
    this.#holdIn(record);
    this.#staged.push(record);
    if (options.deferred) this.#deferred = true;
    return record;
  }

  /**
   * Writes the staged steps when a deferred one is among them; resolves once they are written
   * (their events are then published in the chain, as after any commit).
   */
  writeDeferred(): Promise<void> {
    if (!this.#deferred || !this.#writeStaged) return Promise.resolve();
    const write = this.#writeStaged;
    let written!: () => void;
    const writtenOnce = new Promise<void>((resolve) => (written = resolve));
    this.#holdIn(this.#staged.at(-1)!);
    const done = this.commit([], async (_built, staged) => {
      await write(staged);
      written();
    });
    return Promise.race([writtenOnce, done]);
  }

  #flushStaged(): void {
    if (this.#staged.length === 0 || !this.#writeStaged) return;
    this.#holdIn(this.#staged.at(-1)!);
    const write = this.#writeStaged;
    // A failure stops the run through onFailure; nothing after it is published.
    this.commit([], (_built, staged) => write(staged)).catch(() => undefined);
  }

  /** Publishes already-built events again (recovery of committed events the bus never got). */
  republish(events: readonly TaskEvent[]): Promise<void> {
    return this.#enqueue(async () => {
      await this.#publish(events);
      for (const event of events) if (event.seq > this.#lastSeq) this.#lastSeq = event.seq;
    });
  }

  /** Resolves when everything queued so far is published (rejects if the emitter failed). */
  flush(): Promise<void> {
    this.#release();
    return this.#enqueue(async () => undefined);
  }

  #enqueue(work: () => Promise<void>): Promise<void> {
    const next = this.#chain.then(async () => {
      if (this.#failure) throw this.#failure;
      try {
        await work();
      } catch (err) {
        this.#fail(err as Error);
        throw err;
      }
    });
    // The chain itself never rejects; callers get the rejection from `next`.
    this.#chain = next.catch(() => undefined);
    return next;
  }

  /**
   * Publishes the events of one write as one message (docs/decisions.md "One message per
   * write"), fenced on the subject's last sequence, so a second writer is refused for the whole
   * write. Several go together only when they are already in PostgreSQL (a step's record, or the
   * log under the lease), so their content is fixed by that write. A write too large for one
   * message goes out in several, each fenced on the one before. With `perEvent` (an upgrade
   * from a release whose readers take one event per message), each event is its own message:
   * the first fenced, the others deduplicated by msg-id.
   */
  async #publish(events: readonly TaskEvent[]): Promise<void> {
    if (this.#perEvent) await this.#publishEach(events);
    else for (const part of messagesOf(events)) await this.#publishMessage(part.events, part.texts);
    for (const event of events) this.#onPublished?.(event);
  }

  async #publishMessage(events: readonly TaskEvent[], texts: readonly string[]): Promise<void> {
    const ack = await publish(this.#bus, this.#subject, encoder.encode(eventsMessageOf(texts)), {
      msgID: eventsMessageId(events),
      expect: { lastSubjectSequence: this.#lastStreamSeq },
    });
    if (ack.seq > this.#lastStreamSeq) this.#lastStreamSeq = ack.seq;
  }

  async #publishEach(events: readonly TaskEvent[]): Promise<void> {
    const fence = this.#lastStreamSeq;
    const acks = await Promise.all(
      events.map((event, i) =>
        publish(
          this.#bus,
          this.#subject,
          encoder.encode(JSON.stringify(event)),
          i === 0
            ? { msgID: eventMessageId(event), expect: { lastSubjectSequence: fence } }
            : { msgID: eventMessageId(event) },
        ),
      ),
    );
    for (const ack of acks) if (ack.seq > this.#lastStreamSeq) this.#lastStreamSeq = ack.seq;
  }

  #fail(error: Error): void {
    if (this.#failure) return;
    this.#failure = error;
    if (error instanceof ConflictError) {
      this.#logger.warn({ taskId: this.#taskId }, "another writer published to this task: stopping (lease lost)");
    } else {
      this.#logger.error({ err: error, taskId: this.#taskId }, "publishing a task event failed");
    }
    this.#onFailure(error);
  }
}

/**
 * Most bytes of event texts in one message: well under NATS's default max_payload (1 MiB), so a
 * write of many large events goes out in a few messages instead of being refused. An event
 * larger than this goes alone, as it always did.
 */
export const MESSAGE_BUDGET_BYTES = 256 * 1024;

/** The events of one write, cut into messages of at most MESSAGE_BUDGET_BYTES each. */
function messagesOf(events: readonly TaskEvent[]): { events: TaskEvent[]; texts: string[] }[] {
  const out: { events: TaskEvent[]; texts: string[] }[] = [];
  let current: { events: TaskEvent[]; texts: string[] } | undefined;
  let bytes = 0;
  for (const event of events) {
    const text = JSON.stringify(event);
    const size = Buffer.byteLength(text) + 1;
    if (!current || bytes + size > MESSAGE_BUDGET_BYTES) {
      current = { events: [], texts: [] };
      out.push(current);
      bytes = 0;
    }
    current.events.push(event);
    current.texts.push(text);
    bytes += size;
  }
  return out;
}
