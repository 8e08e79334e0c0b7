import type { Logger } from "@tog/core";
import { systemSubjects } from "@tog/bus";
import type { EventHistoryRepository } from "@tog/event-log";
import { eventTextsOf, lastEventTextOf } from "@tog/events";
import { decodeHubEvent, type HubEvent } from "../hub/hub-event.ts";
import type { JetStreamEvents } from "./jetstream-events.ts";

// Where replays come from. The real-time cache (JetStream, EVENTS_MAX_AGE_SECONDS) serves
// every event it still holds; anything older comes from the permanent log (PostgreSQL). The
// boundary is the first event the cache still holds for the task, asked at each read, so a
// replay that starts a day back reads the log up to that event and then the cache.

export interface StorePosition {
  /** Highest seq stored for the task; 0 when none is. */
  lastSeq: number;
  /** That event, decoded (null when none, or unreadable). */
  last: HubEvent | null;
}

export interface EventStore {
  position(taskId: string): Promise<StorePosition>;
  /** Up to `limit` events with seq > afterSeq, in seq order; empty when none is stored yet. */
  readAfter(taskId: string, afterSeq: number, limit: number): Promise<HubEvent[]>;
}

export interface EventStoreOptions {
  cache: JetStreamEvents;
  log: Pick<EventHistoryRepository, "readRange" | "readLast">;
  prefix: string;
  logger: Logger;
}

/** Remembered read positions ("after seq n of task w, read from stream sequence s"). */
const MAX_HINTS = 10_000;

export function createEventStore(options: EventStoreOptions): EventStore {
  const { cache, log, logger } = options;
  const subjects = systemSubjects(options.prefix);
  const hints = new Map<string, number>();

  const decode = (taskId: string, text: string): HubEvent | null => {
    const event = decodeHubEvent(text, taskId);
    if (!event) logger.warn({ taskId }, "skipping an unreadable stored event");
    return event;
  };

  const remember = (taskId: string, seq: number, nextStreamSeq: number) => {
    hints.set(`${taskId}:${seq}`, nextStreamSeq);
    if (hints.size > MAX_HINTS) hints.delete(hints.keys().next().value!);
  };

  return {
    async position(taskId) {
      const last = await cache.lastOf(subjects.events(taskId));
      if (last) {
        const event = decodeHubEvent(lastEventTextOf(last.text), taskId);
        return { lastSeq: event?.seq ?? last.lastSeq, last: event };
      }
      const row = await log.readLast(taskId);
      if (!row) return { lastSeq: 0, last: null };
      return { lastSeq: row.seq, last: decodeHubEvent(row.json, taskId) };
    },

    async readAfter(taskId, afterSeq, limit) {
      const subject = subjects.events(taskId);
      const first = await cache.nextOf(subject, 0);
      if (!first || afterSeq + 1 < first.seq) {
        const count = first ? Math.min(limit, first.seq - 1 - afterSeq) : limit;
        const rows = await log.readRange(taskId, afterSeq, count);
        if (rows.length > 0 || !first) return rows.flatMap((r) => decode(taskId, r.json) ?? []);
        logger.warn(
          { taskId, afterSeq, firstCachedSeq: first.seq },
          "events older than the real-time cache are missing from the permanent log; continuing from the cache",
        );
      }
      if (!first) return [];
      let start = hints.get(`${taskId}:${afterSeq}`);
      if (start === undefined) {
        if (afterSeq + 1 <= first.seq) {
          start = first.streamSeq;
        } else {
          const last = await cache.lastOf(subject);
          if (!last || last.lastSeq <= afterSeq) return [];
          const located = await cache.locate(subject, afterSeq + 1, first, last);
          if (located === null) return [];
          start = located;
        }
      }
      // A message holds several events, so `limit` messages may hold more than `limit` events:
      // the rest of a message cut short is read again, from its stream sequence, next time.
      const entries = await cache.read(subject, start, limit);
      const events: HubEvent[] = [];
      let next = entries.length > 0 ? entries.at(-1)!.streamSeq + 1 : undefined;
      read: for (const entry of entries) {
        for (const text of eventTextsOf(entry.text)) {
          const event = decode(taskId, text);
          if (!event || event.seq <= afterSeq) continue;
          if (events.length === limit) {
            next = entry.streamSeq;
            break read;
          }
          events.push(event);
        }
      }
      const lastEvent = events.at(-1);
      if (lastEvent && next !== undefined) remember(taskId, lastEvent.seq, next);
      return events;
    },
  };
}
