import type { Db, DbPool } from "@tog/db";
import type { EventRow } from "./event-row.ts";

// The event persister's and the event retention's statements on `task_events` (the orchestrator
// owns the log; other services read it through libs/event-log).

/**
 * raw: one `INSERT … unnest` per batch of up to 500 events (docs/performance.md "Run", events).
 * Writes rows with one statement, whatever their number: columns travel as arrays and
 * `unnest` turns them back into rows. An event already stored is skipped, which makes a
 * redelivered or republished event harmless. Returns the number of rows newly written.
 * `event` is cast from text to json, which keeps the text exactly as sent. On the pg pool as a
 * named statement: planned once per connection (docs/performance.md "Prepared statements"),
 * without Prisma's query path, on every batch of every task.
 */
export async function insertEventRows(pool: Pick<DbPool, "query">, rows: readonly EventRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const res = await pool.query({ name: "insert-events", text: INSERT_EVENTS_SQL, values: eventColumns(rows) });
  return res.rowCount ?? 0;
}

/**
 * The rows as the six arrays every `unnest` insert into task_events takes, in the order
 * task_id uuid[], seq int[], type text[], agent_id text[], timestamp timestamptz[], event text[]
 * (the event's JSON text, cast to json by the statement, which keeps it as sent).
 */
export function eventColumns(rows: readonly EventRow[]): unknown[][] {
  return [
    rows.map((r) => r.taskId),
    rows.map((r) => r.seq),
    rows.map((r) => r.type),
    rows.map((r) => r.agentId),
    rows.map((r) => r.timestamp),
    rows.map((r) => r.json),
  ];
}

const INSERT_EVENTS_SQL = `
  INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
  SELECT u.task_id, u.seq, u.type, u.agent_id, u.ts, u.event::json
  FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], $6::text[])
    AS u(task_id, seq, type, agent_id, ts, event)
  ON CONFLICT (task_id, seq) DO NOTHING`;

/**
 * Deletes up to `batchSize` events older than `days`, committed on its own; returns how many.
 * raw: ctid = ANY(ARRAY(...)) lets the planner fetch the rows by their physical address.
 */
export function deleteEventsOlderThan(db: Db, days: number, batchSize: number): Promise<number> {
  return db.$executeRaw`
            DELETE FROM task_events WHERE ctid = ANY(ARRAY(
              SELECT ctid FROM task_events
              WHERE "timestamp" < now() - make_interval(days => ${days}::int)
              LIMIT ${batchSize}::int))`;
}
