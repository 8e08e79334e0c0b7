import type { DbPool } from "@tog/db";
import pg, { type QueryResult } from "pg";
import { resolveSessionForSubmit, type ResolvedSession } from "./session.resolver.ts";

// The submit transaction on a pg client (the hot path: one round trip per statement, the new-
// session case in a single statement). `enqueue` runs while the transaction is open, so a task
// row commits only with its run queued (see task.service.ts).

export interface NewTask {
  id: string;
  userId: string;
  sessionRef: string | undefined;
  query: string;
  requestedMode: string | null;
  spec: unknown;
  traceId: string;
  traceparent: string | null;
  tokenBudget: number;
}

export interface SubmittedTask {
  session: ResolvedSession;
  createdAt: Date;
}

export class SubmitRepository {
  readonly #pool: DbPool;

  constructor(options: { pool: DbPool }) {
    this.#pool = options.pool;
  }

  async submit(task: NewTask, enqueue: () => Promise<void>): Promise<SubmittedTask> {
    const client = await this.#pool.connect();
    try {
      let session: ResolvedSession;
      let createdAt: Date;
      if (task.sessionRef === undefined) {
        // BEGIN and the insert travel as one simple-protocol query (values as escaped literals):
        // one round trip fewer on the path every default submission takes.
        const sessionId = crypto.randomUUID();
        const lit = (v: string | null) => (v === null ? "NULL" : pg.escapeLiteral(v));
        const results = (await client.query(
          `BEGIN;
           WITH lock AS (SELECT pg_advisory_xact_lock(hashtextextended(${lit(task.id)}, 0))),
                s AS (INSERT INTO sessions (id, user_id, token_budget, task_count)
                      SELECT ${lit(sessionId)}::uuid, ${lit(task.userId)}::uuid, ${Math.trunc(task.tokenBudget)}, 1 FROM lock RETURNING id)
           INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent)
           SELECT ${lit(task.id)}::uuid, ${lit(task.userId)}::uuid, s.id, ${lit(task.query)}, ${lit(task.requestedMode)}, 'QUEUED',
                  ${lit(JSON.stringify(task.spec))}::jsonb, ${lit(task.traceId)}, ${lit(task.traceparent)} FROM s
           RETURNING created_at`,
        )) as unknown as QueryResult<{ created_at: Date }>[];
        session = { id: sessionId, ref: sessionId, created: true };
        createdAt = results[1]!.rows[0]!.created_at;
      } else {
        await client.query(`BEGIN; SELECT pg_advisory_xact_lock(hashtextextended(${pg.escapeLiteral(task.id)}, 0))`);
        session = await resolveSessionForSubmit(client, task.userId, task.sessionRef, task.tokenBudget);
        const res = await client.query<{ created_at: Date }>(
          `INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent)
           VALUES ($1::uuid, $2::uuid, $8::uuid, $3, $4, 'QUEUED', $5::jsonb, $6, $7) RETURNING created_at`,
          [task.id, task.userId, task.query, task.requestedMode, JSON.stringify(task.spec), task.traceId, task.traceparent, session.id],
        );
        createdAt = res.rows[0]!.created_at;
      }
      await enqueue();
      await client.query("COMMIT");
      return { session, createdAt };
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    } finally {
      client.release();
    }
  }
}
