import type { ConsumerMessages, JsMsg } from "@nats-io/jetstream";
import { EVENT_PERSISTER, type Bus } from "@tog/bus";
import type { Logger } from "@tog/core";
import type { DbPool } from "@tog/db";
import { insertEventRows } from "./event.repository.ts";
import { toEventRows, type EventRow } from "./event-row.ts";
import { isDataError, sqlStateOf } from "./pg-errors.ts";
import { tracedPersist } from "../telemetry/traced-calls.ts";

// Copies every event from the EVENTS stream into task_events (the permanent log).
//
// Messages are pulled continuously and written in batches: a batch goes out when it holds
// `batchSize` messages or when its oldest message has waited `maxWaitMs`. One INSERT per batch,
// then the batch is acked. Nothing is acked before it is stored, so a crash at any point only
// causes redelivery, which ON CONFLICT turns into a no-op.
//
// A failed write is retried in place, with growing pauses, until it succeeds: the batch and
// every message received meanwhile stay unacked (the server stops delivering at the consumer's
// max_ack_pending, which bounds memory) and their ack deadline is pushed back with `working()`
// so the server does not redeliver what is still held. Only a message that can never be stored
// (not an event, or refused by PostgreSQL for its data) is terminated, alone.

export interface EventPersisterMetrics {
  /** Events newly written. */
  persisted?(count: number): void;
  /** Events that were already stored (redelivery, republish). */
  duplicates?(count: number): void;
  /** Messages terminated because they can never be stored. */
  rejected?(count: number): void;
  /** Failed writes; each is retried. */
  writeErrors?(count: number): void;
  /** One successful batch write. */
  batchWritten?(size: number, durationMs: number): void;
}

export interface EventPersisterOptions {
  bus: Bus;
  /** The pg pool the batches are written on. */
  pool: Pick<DbPool, "query">;
  logger: Logger;
  /** Most messages per INSERT (default 500). */
  batchSize?: number;
  /** Longest wait for a batch to fill, from its oldest message (default 20 ms). */
  maxWaitMs?: number;
  /** Longest pause between two attempts of a failed write (default 5 s). */
  maxBackoffMs?: number;
  metrics?: EventPersisterMetrics;
}

export interface EventPersister {
  /** Stops pulling, writes what was already received (or hands it back to the server), then resolves. */
  stop(): Promise<void>;
}

interface Held {
  msg: JsMsg;
  receivedAt: number;
}

interface PendingRow {
  row: EventRow;
  /**
   * The messages that hold the row's event: more than one when it was delivered twice. A
   * message of several events is acked once all of them are stored.
   */
  msgs: JsMsg[];
}

const FIRST_BACKOFF_MS = 100;
// Life of one pull request: short, so a stopped instance's last request soon stops attracting
// messages (the server does not notice it is gone and delivers into the void until it expires).
const PULL_EXPIRES_MS = 5_000;
const HAND_BACK_DELAY_MS = PULL_EXPIRES_MS + 1_000;
// Well under the consumer's 30 s ack_wait.
const EXTEND_EVERY_MS = 5_000;

export function startEventPersister(options: EventPersisterOptions): EventPersister {
  const { bus, pool, metrics = {} } = options;
  const logger = options.logger.child({ component: "event-persister" });
  const batchSize = Math.max(1, options.batchSize ?? 500);
  const maxWaitMs = Math.max(0, options.maxWaitMs ?? 20);
  const maxBackoffMs = Math.max(FIRST_BACKOFF_MS, options.maxBackoffMs ?? 5_000);
  const stream = bus.streamName("EVENTS");

  const queue: Held[] = [];
  const stopController = new AbortController();
  const stopSignal = stopController.signal;
  let messages: ConsumerMessages | undefined;
  let pumpFinished = false;
  // Set when a write fails during shutdown: everything still held goes back to the server.
  let abandon = false;
  let lastExtendAt = 0;
  const wakeup = createWakeup();

  async function pump(): Promise<void> {
    let failures = 0;
    while (!stopSignal.aborted && !bus.nc.isClosed()) {
      try {
        const consumer = await bus.js.consumers.get(stream, EVENT_PERSISTER);
        // Room for two batches in flight; the consumer's max_ack_pending caps the rest.
        const current = await consumer.consume({
          max_messages: Math.max(100, batchSize * 2),
          expires: PULL_EXPIRES_MS,
        });
        messages = current;
        if (stopSignal.aborted) current.stop();
        failures = 0;
        for await (const msg of current) {
          queue.push({ msg, receivedAt: Date.now() });
          if (queue.length === 1 || queue.length >= batchSize) wakeup.notify();
        }
      } catch (err) {
        failures++;
        logger.warn({ err, stream, consumer: EVENT_PERSISTER, failures }, "event consumer failed; retrying");
      }
      if (!stopSignal.aborted) await sleep(backoffMs(Math.max(1, failures), maxBackoffMs), stopSignal);
    }
    pumpFinished = true;
    wakeup.notify();
  }

  async function flusher(): Promise<void> {
    for (;;) {
      if (abandon) {
        handBack(queue.splice(0).map((h) => h.msg));
        if (pumpFinished) return;
        await wakeup.wait();
        continue;
      }
      const oldest = queue[0];
      if (!oldest) {
        if (pumpFinished) return;
        await wakeup.wait();
        continue;
      }
      const waited = Date.now() - oldest.receivedAt;
      if (queue.length < batchSize && waited < maxWaitMs && !stopSignal.aborted) {
        await wakeup.wait(maxWaitMs - waited);
        continue;
      }
      const batch = queue.splice(0, batchSize).map((h) => h.msg);
      await tracedPersist(batch, () => persistBatch(batch));
    }
  }

  async function persistBatch(batch: JsMsg[]): Promise<void> {
    const byKey = new Map<string, PendingRow>();
    for (const msg of batch) {
      const parsed = toEventRows(msg.data);
      if (!parsed.ok) {
        reject([msg], parsed.reason);
        continue;
      }
      for (const row of parsed.rows) {
        const key = `${row.taskId}:${row.seq}`;
        const existing = byKey.get(key);
        if (existing) existing.msgs.push(msg);
        else byKey.set(key, { row, msgs: [msg] });
      }
    }
    await write([...byKey.values()]);
  }

  /** Writes the rows, retrying until they are stored, terminated, or handed back on shutdown. */
  async function write(pending: PendingRow[]): Promise<void> {
    if (pending.length === 0) return;
    for (let attempt = 1; ; attempt++) {
      const startedAt = performance.now();
      try {
        const inserted = await insertEventRows(
          pool,
          pending.map((p) => p.row),
        );
        const msgs = pending.flatMap((p) => p.msgs);
        // A message answers once: of an ack and a term() for two of its events, the first counts.
        for (const msg of new Set(msgs)) msg.ack();
        metrics.batchWritten?.(pending.length, performance.now() - startedAt);
        metrics.persisted?.(inserted);
        if (msgs.length > inserted) metrics.duplicates?.(msgs.length - inserted);
        if (attempt > 1) logger.info({ attempts: attempt, events: pending.length }, "event write recovered");
        return;
      } catch (err) {
        if (isDataError(err)) {
          if (pending.length > 1) {
            // Find the row PostgreSQL refuses; the others are stored as usual.
            for (const p of pending) await write([p]);
          } else {
            reject(pending[0]!.msgs, `refused by the database (SQLSTATE ${sqlStateOf(err)})`, err);
          }
          return;
        }
        metrics.writeErrors?.(1);
        const log = { err, sqlState: sqlStateOf(err), attempt, events: pending.length, held: queue.length };
        if (attempt === 1) logger.error(log, "event write failed; retrying");
        else logger.warn(log, "event write failed again; retrying");
        if (stopSignal.aborted) {
          abandon = true;
          handBack(pending.flatMap((p) => p.msgs));
          return;
        }
        extendHeld(pending);
        await sleep(backoffMs(attempt, maxBackoffMs), stopSignal);
      }
    }
  }

  function reject(msgs: JsMsg[], reason: string, err?: unknown): void {
    for (const msg of msgs) {
      logger.error(
        { err, reason, subject: msg.subject, streamSeq: msg.seq, preview: preview(msg.data) },
        "event message can never be stored; terminating it",
      );
      // No reason text: nats-server 2.9 ignores a "+TERM <reason>" ack.
      msg.term();
    }
    metrics.rejected?.(msgs.length);
  }

  /** Keeps the server from redelivering what this process still holds while it retries. */
  function extendHeld(pending: PendingRow[]): void {
    const now = Date.now();
    if (now - lastExtendAt < EXTEND_EVERY_MS) return;
    lastExtendAt = now;
    for (const p of pending) for (const msg of p.msgs) msg.working();
    for (const h of queue) h.msg.working();
  }

  /** Returns messages to the server for redelivery to another instance. */
  function handBack(msgs: JsMsg[]): void {
    if (msgs.length === 0) return;
    // Delayed past the life of our last pull request: nats-server 2.9 would otherwise send the
    // first redelivered message to that dead request, where it waits out the 30 s ack_wait.
    for (const msg of msgs) msg.nak(HAND_BACK_DELAY_MS);
    logger.warn({ events: msgs.length }, "event persister stopping with unstored events; returned them to the stream");
  }

  const pumpDone = pump().catch((err: unknown) => {
    pumpFinished = true;
    wakeup.notify();
    logger.error({ err }, "event consumer loop crashed");
  });
  const flusherDone = flusher().catch((err: unknown) => logger.error({ err }, "event writer loop crashed"));
  logger.info({ stream, consumer: EVENT_PERSISTER, batchSize, maxWaitMs }, "event persister started");

  let stopped: Promise<void> | undefined;
  return {
    stop() {
      stopped ??= (async () => {
        stopController.abort();
        messages?.stop();
        wakeup.notify();
        await Promise.all([pumpDone, flusherDone]);
        logger.info("event persister stopped");
      })();
      return stopped;
    },
  };
}

/** Exponential from 100 ms, capped, with up to 20 % jitter so instances do not retry in step. */
function backoffMs(attempt: number, max: number): number {
  const base = Math.min(max, FIRST_BACKOFF_MS * 2 ** Math.min(attempt - 1, 20));
  return Math.round(base * (0.8 + Math.random() * 0.2));
}

function sleep(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer);
      signal.removeEventListener("abort", done);
      resolve();
    };
    const timer = setTimeout(done, ms);
    signal.addEventListener("abort", done, { once: true });
  });
}

/** A level-triggered wake-up: `notify` releases the current waiter, or the next one if none waits. */
function createWakeup() {
  let pending = false;
  let release: (() => void) | undefined;
  return {
    notify() {
      if (release) {
        const r = release;
        release = undefined;
        r();
      } else {
        pending = true;
      }
    },
    wait(timeoutMs?: number): Promise<void> {
      if (pending) {
        pending = false;
        return Promise.resolve();
      }
      return new Promise<void>((resolve) => {
        const timer = timeoutMs === undefined ? undefined : setTimeout(finish, timeoutMs);
        function finish() {
          clearTimeout(timer);
          if (release === finish) release = undefined;
          resolve();
        }
        release = finish;
      });
    },
  };
}

function preview(data: Uint8Array): string {
  const text = Buffer.from(data.subarray(0, 200)).toString("utf8");
  return data.length > 200 ? `${text}…` : text;
}
