import { withTransaction, type DbPool } from "@tog/db";
import type { TaskStatus } from "@tog/proto";
import type { PoolClient } from "pg";
import { writeFinals, type FinalRecord } from "../runtime/final-write.repository.ts";

// The cancel's statements, one transaction per cancel (docs/decisions.md, "Cancel").
//
// Lock the task's row, record the `cancel` signal and the request, and end a task no run has
// claimed with the final write the runs use (runtime/final-write.repository.ts).

export interface CancelTarget {
  userId: string;
  sessionId: string;
  status: TaskStatus;
  traceId: string;
}

/** The statements of one cancel transaction. */
export interface CancelStatements {
  /** The task's row, locked until the transaction ends; undefined when there is no such task. */
  lock(taskId: string): Promise<CancelTarget | undefined>;
  /** The `cancel` signal, and the request on the task (a repeated request keeps the first time and reason). */
  request(taskId: string, reason: string | null, by: string): Promise<void>;
  /** Ends a task no run has claimed (still QUEUED) with its final write; false if it is not QUEUED. */
  finishQueued(final: Omit<FinalRecord, "owner">): Promise<boolean>;
}

export class CancelRepository {
  readonly #pool: DbPool;

  constructor(options: { pool: DbPool }) {
    this.#pool = options.pool;
  }

  transaction<T>(fn: (tx: CancelStatements) => Promise<T>): Promise<T> {
    return withTransaction(this.#pool, (client) => fn(statements(client)));
  }
}

function statements(client: PoolClient): CancelStatements {
  return {
    async lock(taskId) {
      // raw: row lock (FOR UPDATE), which Prisma's model API cannot take; two cancels serialize here.
      const res = await client.query<{ user_id: string; session_id: string; status: TaskStatus; trace_id: string }>(
        "SELECT user_id::text, session_id::text, status, trace_id FROM tasks WHERE id = $1::uuid FOR UPDATE",
        [taskId],
      );
      const row = res.rows[0];
      return row && { userId: row.user_id, sessionId: row.session_id, status: row.status, traceId: row.trace_id };
    },
    async request(taskId, reason, by) {
      await client.query(REQUEST_SQL, [taskId, reason, JSON.stringify({ reason, by })]);
    },
    async finishQueued(final) {
      const written = await writeFinals(client, [{ ...final, owner: null }]);
      return written.has(final.taskId.toLowerCase());
    },
  };
}

// raw: the signal and the request in one round trip (a data-modifying CTE), the database clock for the request.
const REQUEST_SQL = `
  WITH signal AS (INSERT INTO task_signals (task_id, name, payload) VALUES ($1::uuid, 'cancel', $3::jsonb))
  UPDATE tasks SET cancel_requested_at = coalesce(cancel_requested_at, now()), cancel_reason = coalesce(cancel_reason, $2),
         updated_at = now()
  WHERE id = $1::uuid`;
