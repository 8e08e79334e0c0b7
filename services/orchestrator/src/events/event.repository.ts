import type { Db } from "@tog/db";
import type { EventRow } from "./event-row.ts";

// The event persister's and the event retention's statements on `task_events` (the orchestrator
// owns the log; other services read it through libs/event-log).

/**
 * raw: one `INSERT … unnest` per batch of up to 500 events (docs/performance.md "Run", events).
 * Writes rows with one statement, whatever their number: columns travel as arrays and
 * `unnest` turns them back into rows. An event already stored is skipped, which makes a
 * redelivered or republished event harmless. Returns the number of rows newly written.
 * `event` is cast from text to json, which keeps the text exactly as sent.
 */
export async function insertEventRows(db: Db, rows: readonly EventRow[]): Promise<number> {
  if (rows.length === 0) return 0;
  const taskIds = rows.map((r) => r.taskId);
  const seqs = rows.map((r) => r.seq);
  const types = rows.map((r) => r.type);
  const agentIds = rows.map((r) => r.agentId);
  const timestamps = rows.map((r) => r.timestamp);
  const events = rows.map((r) => r.json);
  return db.$executeRaw`
    INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
    SELECT u.task_id, u.seq, u.type, u.agent_id, u.ts, u.event::json
    FROM unnest(${taskIds}::uuid[], ${seqs}::int[], ${types}::text[], ${agentIds}::text[],
                ${timestamps}::timestamptz[], ${events}::text[])
      AS u(task_id, seq, type, agent_id, ts, event)
    ON CONFLICT (task_id, seq) DO NOTHING`;
}

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
