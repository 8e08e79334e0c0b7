import { sqlArray, type DbPool } from "@tog/db";
import type { TaskEvent } from "@tog/events";
import { GroupCommit } from "./group-commit.ts";
import { linesArray } from "./json-lines.ts";
import { eventLogColumns } from "./step-columns.ts";

// Live events into the permanent log before they are published (docs/performance.md "The log
// before the bus"): the events a run reports outside any step record, group-committed with those
// of the process's other runs, each task's rows fenced by its run's lease (the task row locked for
// the statement, as in checkpoint.repository.ts). Events of steps go
// into the log with their steps (checkpoint.repository.ts, final-write.repository.ts).

export interface LiveEvents {
  taskId: string;
  owner: string;
  events: readonly TaskEvent[];
}

// raw: an `unnest` batch fenced by a join on the lease, which Prisma cannot say (docs/performance.md "Run").
const LOG_LIVE_SQL = `
  WITH u AS (
    SELECT * FROM unnest($1::uuid[], $2::int[], $3::text[], $4::text[], $5::timestamptz[], ${linesArray("$6")}, $7::text[])
      AS u(task_id, seq, type, agent_id, ts, event, owner)
  ),
  f AS (
    SELECT t.id AS task_id FROM (SELECT DISTINCT task_id, owner FROM u) o
      JOIN tasks t ON t.id = o.task_id AND t.lease_owner = o.owner AND t.status = 'RUNNING'
    ORDER BY t.id FOR SHARE OF t
  ),
  i AS (
    INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
    SELECT u.task_id, u.seq, u.type, u.agent_id, u.ts, u.event::json FROM u JOIN f ON f.task_id = u.task_id
    ON CONFLICT (task_id, seq) DO NOTHING
  )
  SELECT task_id::text AS task_id FROM f`;

export class EventLogRepository {
  readonly #pool: DbPool;
  readonly #group: GroupCommit<LiveEvents, boolean>;

  constructor(options: { pool: DbPool }) {
    this.#pool = options.pool;
    this.#group = new GroupCommit({ flush: (items) => this.#insert(items) });
  }

  /** Resolves true once the events are in the log, false when the run's lease no longer holds. */
  write(live: LiveEvents): Promise<boolean> {
    return this.#group.submit(live);
  }

  async #insert(items: LiveEvents[]): Promise<boolean[]> {
    const owners = items.flatMap((item) => item.events.map(() => item.owner));
    const res = await this.#pool.query<{ task_id: string }>({
      name: "log-live-events",
      text: LOG_LIVE_SQL,
      values: [...eventLogColumns(items.flatMap((item) => item.events)), sqlArray(owners)],
    });
    const held = new Set(res.rows.map((r) => r.task_id));
    return items.map((item) => held.has(item.taskId.toLowerCase()));
  }
}
