import { isUuid, ValidationError } from "@tog/core";
import type { Db } from "@tog/db";

// Reads of the permanent event log. Events come back as the exact JSON text that was
// published (`event::text` of a json column is the stored text), so the history endpoint and a
// replay serve byte-for-byte what live subscribers saw. raw: `event::text`, which Prisma's model
// API cannot return (it parses the json column), on the stream's replay path.
// The log is the orchestrator's table (docs/architecture.md "Tables"); this lib is how others read it.

export interface ListEventsQuery {
  taskId: string;
  limit: number;
  offset: number;
  /** Only events with a greater seq; offset then counts from there. */
  afterSeq?: number | undefined;
}

export interface EventPage {
  /** Exact JSON text of each event, in seq order. */
  events: string[];
  /** Every stored event of the task, whatever the page. */
  totalCount: number;
}

export interface StoredEvent {
  seq: number;
  /** Exact JSON text of the event. */
  json: string;
}

export interface EventHistoryRepository {
  listEvents(query: ListEventsQuery): Promise<EventPage>;
  /** Highest stored seq of the task; 0 when none is stored. */
  lastSeq(taskId: string): Promise<number>;
  /** Up to `limit` events with seq > afterSeq, in seq order (replay of a stream). */
  readRange(taskId: string, afterSeq: number, limit: number): Promise<StoredEvent[]>;
  /** The stored event with the highest seq, or null when none is stored. */
  readLast(taskId: string): Promise<StoredEvent | null>;
}

/**
 * task_events.seq is a PostgreSQL integer: a cursor above its range (a client's after_seq may be
 * any safe integer) is sent as this, which no stored seq exceeds, instead of failing the query.
 */
const MAX_SEQ = 2_147_483_647;

export function createEventHistoryRepository(options: { db: Db }): EventHistoryRepository {
  const { db } = options;

  return {
    async listEvents(query) {
      checkCount("limit", query.limit, 1);
      checkCount("offset", query.offset, 0);
      checkCount("afterSeq", query.afterSeq ?? 0, 0);
      const afterSeq = Math.min(query.afterSeq ?? 0, MAX_SEQ);
      // Not a UUID: no task can have that id (and the uuid cast would fail).
      if (!isUuid(query.taskId)) return { events: [], totalCount: 0 };
      const [rows, counted] = await Promise.all([
        db.$queryRaw<{ event: string }[]>`
          SELECT event::text AS event FROM task_events
          WHERE task_id = ${query.taskId}::uuid AND seq > ${afterSeq}
          ORDER BY seq LIMIT ${query.limit} OFFSET ${query.offset}`,
        db.$queryRaw<{ total: number }[]>`
          SELECT count(*)::int AS total FROM task_events WHERE task_id = ${query.taskId}::uuid`,
      ]);
      return { events: rows.map((r) => r.event), totalCount: counted[0]?.total ?? 0 };
    },

    async lastSeq(taskId) {
      if (!isUuid(taskId)) return 0;
      const rows = await db.$queryRaw<{ seq: number | null }[]>`
        SELECT max(seq) AS seq FROM task_events WHERE task_id = ${taskId}::uuid`;
      return rows[0]?.seq ?? 0;
    },

    async readRange(taskId, after, limit) {
      checkCount("afterSeq", after, 0);
      const afterSeq = Math.min(after, MAX_SEQ);
      checkCount("limit", limit, 1);
      if (!isUuid(taskId)) return [];
      const rows = await db.$queryRaw<{ seq: number; event: string }[]>`
        SELECT seq, event::text AS event FROM task_events
        WHERE task_id = ${taskId}::uuid AND seq > ${afterSeq}
        ORDER BY seq LIMIT ${limit}`;
      return rows.map((r) => ({ seq: r.seq, json: r.event }));
    },

    async readLast(taskId) {
      if (!isUuid(taskId)) return null;
      const rows = await db.$queryRaw<{ seq: number; event: string }[]>`
        SELECT seq, event::text AS event FROM task_events
        WHERE task_id = ${taskId}::uuid ORDER BY seq DESC LIMIT 1`;
      const row = rows[0];
      return row ? { seq: row.seq, json: row.event } : null;
    },
  };
}

function checkCount(name: string, value: number, min: number): void {
  if (!Number.isSafeInteger(value) || value < min) {
    throw new ValidationError(`Invalid ${name}: ${value} (expected an integer >= ${min})`);
  }
}
