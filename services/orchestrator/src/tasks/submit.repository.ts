import type { DbPool } from "@tog/db";
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
      await client.query("BEGIN");
      let session: ResolvedSession;
      let createdAt: Date;
      const taskValues = [task.id, task.userId, task.query, task.requestedMode, JSON.stringify(task.spec), task.traceId, task.traceparent];
      if (task.sessionRef === undefined) {
        const sessionId = crypto.randomUUID();
        const res = await client.query<{ created_at: Date }>(
          `WITH lock AS (SELECT pg_advisory_xact_lock(hashtextextended($1, 0))),
                s AS (INSERT INTO sessions (id, user_id, token_budget, task_count) SELECT $8::uuid, $2::uuid, $9, 1 FROM lock RETURNING id)
           INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent)
           SELECT $1::uuid, $2::uuid, s.id, $3, $4, 'QUEUED', $5::jsonb, $6, $7 FROM s
           RETURNING created_at`,
          [...taskValues, sessionId, task.tokenBudget],
        );
        session = { id: sessionId, ref: sessionId, created: true };
        createdAt = res.rows[0]!.created_at;
      } else {
        await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [task.id]);
        session = await resolveSessionForSubmit(client, task.userId, task.sessionRef, task.tokenBudget);
        const res = await client.query<{ created_at: Date }>(
          `INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent)
           VALUES ($1::uuid, $2::uuid, $8::uuid, $3, $4, 'QUEUED', $5::jsonb, $6, $7) RETURNING created_at`,
          [...taskValues, session.id],
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
