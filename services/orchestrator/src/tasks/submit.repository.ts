import { newId } from "@tog/core";
import { sqlLiteral, withClient, type DbPool } from "@tog/db";
import type { QueryResult } from "pg";
import { GroupCommit } from "../runtime/group-commit.ts";
import type { LocalSubmits } from "../runtime/local-submits.ts";
import { resolveSessionForSubmit, type ResolvedSession } from "./session.resolver.ts";

// raw: the submit's hot path on a pg client, counted in round trips (docs/performance.md "Submit").
// The submit transaction on a pg client (the hot path: one round trip per statement, the new-
// session case in a single statement). `enqueue` runs while the transaction is open, so a task
// row commits only with its run queued (see task.service.ts). Submits that open a new session
// (the default) are group-committed: those arriving while one transaction is in flight share the
// next (one round trip for all their inserts, their runs queued concurrently, one commit).

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
  /** Identity of a request with an Idempotency-Key (sha256 hex) and how long a repeat replays. */
  idempotency?: { keyHash: string; ttlSeconds: number } | undefined;
}

export type SubmitOutcome =
  | { kind: "created"; session: ResolvedSession; createdAt: Date }
  /** A task with the same idempotency identity exists (created within the TTL): nothing was written. */
  | { kind: "existing"; taskId: string; sessionId: string; status: string; createdAt: Date };

/** ON CONFLICT target of the partial unique index (migration 20261124200000_task_idempotency_key). */
const ON_KEY_CONFLICT = " ON CONFLICT (user_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING";

class DuplicateKey extends Error {}

interface NewSessionSubmit {
  task: NewTask;
  enqueue: () => Promise<void>;
}
type NewSessionOutcome = { kind: "created"; session: ResolvedSession; createdAt: Date } | { kind: "duplicate" };

export class SubmitRepository {
  readonly #pool: DbPool;
  readonly #newSessions: GroupCommit<NewSessionSubmit, NewSessionOutcome>;
  readonly #local: LocalSubmits | undefined;

  /** `localSubmits`: where a worker of this process sees which submits are still open. */
  constructor(options: { pool: DbPool; maxBatch?: number; localSubmits?: LocalSubmits | undefined }) {
    this.#pool = options.pool;
    this.#local = options.localSubmits;
    this.#newSessions = new GroupCommit({
      flush: (items) => this.#insertNewSessions(items),
      maxBatch: options.maxBatch ?? 100,
    });
  }

  /**
   * Inserts the task and queues its run in one transaction. With an idempotency identity the
   * same INSERT detects a repeat (ON CONFLICT): the transaction is rolled back and the earlier
   * task returned; an earlier task older than the TTL gives up its identity and the submit is
   * tried once more (contract 4.1: after the TTL the same key creates a new task).
   */
  async submit(task: NewTask, enqueue: () => Promise<void>): Promise<SubmitOutcome> {
    for (let attempt = 0; ; attempt++) {
      try {
        if (task.sessionRef === undefined) {
          const outcome = await this.#newSessions.submit({ task, enqueue });
          if (outcome.kind === "duplicate") throw new DuplicateKey();
          return outcome;
        }
        return await this.#insertInSession(task, task.sessionRef, enqueue);
      } catch (err) {
        if (!(err instanceof DuplicateKey) || !task.idempotency || attempt > 1) throw err;
        const existing = await this.#existing(
          task.userId,
          task.idempotency.keyHash,
          task.idempotency.ttlSeconds,
          attempt === 0,
        );
        if (existing) return existing;
      }
    }
  }

  /** The task holding the identity, if within the TTL; otherwise (when allowed) frees the identity. */
  async #existing(
    userId: string,
    keyHash: string,
    ttlSeconds: number,
    mayExpire: boolean,
  ): Promise<SubmitOutcome | undefined> {
    const res = await this.#pool.query<{
      id: string;
      session_id: string;
      status: string;
      created_at: Date;
      live: boolean;
    }>(
      `SELECT id::text, session_id::text, status, created_at, created_at > now() - $3 * interval '1 second' AS live
       FROM tasks WHERE user_id = $1::uuid AND idempotency_key = $2`,
      [userId, keyHash, ttlSeconds],
    );
    const row = res.rows[0];
    if (row && (row.live || !mayExpire))
      return {
        kind: "existing",
        taskId: row.id,
        sessionId: row.session_id,
        status: row.status,
        createdAt: row.created_at,
      };
    if (row) {
      await this.#pool.query(
        `UPDATE tasks SET idempotency_key = NULL WHERE user_id = $1::uuid AND idempotency_key = $2 AND created_at <= now() - $3 * interval '1 second'`,
        [userId, keyHash, ttlSeconds],
      );
    }
    return undefined;
  }

  /**
   * New-session submits of one batch: BEGIN and one prepared statement inserting every session
   * and task of the batch, the runs of the inserted tasks queued concurrently, one COMMIT. Any
   * failure rolls the batch back and GroupCommit retries each submit on its own, so one bad
   * submit fails only itself; a run queued before the rollback is queued again with the same
   * message id (deduplicated).
   */
  #insertNewSessions(items: NewSessionSubmit[]): Promise<NewSessionOutcome[]> {
    return this.#tracked(
      items.map(({ task }) => task.id),
      () => this.#insertNewSessionsTx(items),
    );
  }

  #insertNewSessionsTx(items: NewSessionSubmit[]): Promise<NewSessionOutcome[]> {
    return withClient(this.#pool, async (client) => {
      const sessionIds = items.map(() => newId());
      const rows = items.map(({ task }, i) => ({
        id: task.id,
        user_id: task.userId,
        session_id: sessionIds[i],
        token_budget: Math.trunc(task.tokenBudget),
        query: task.query,
        requested_mode: task.requestedMode,
        spec: task.spec,
        trace_id: task.traceId,
        traceparent: task.traceparent,
        idempotency_key: task.idempotency?.keyHash ?? null,
      }));
      // Prepared on a connection's first batch, in a round trip of its own: sent together with a
      // batch that then failed, it would exist without the connection knowing it.
      if (!prepared.has(client)) {
        await client.query(PREPARE_NEW_SESSIONS).catch((err: unknown) => {
          if ((err as { code?: string }).code !== DUPLICATE_PREPARED_STATEMENT) throw err;
        });
        prepared.add(client);
      }
      // One simple-protocol round trip.
      const results = (await client.query(
        `BEGIN; EXECUTE tog_submit_new_sessions(${sqlLiteral(JSON.stringify(rows))})`,
      )) as unknown as QueryResult<{ id: string; created_at: Date }>[];
      const created = new Map(results.at(-1)!.rows.map((r) => [r.id, r.created_at]));
      const outcomes = items.map(({ task }, i): NewSessionOutcome => {
        const createdAt = created.get(task.id);
        if (!createdAt) return { kind: "duplicate" };
        const id = sessionIds[i]!;
        return { kind: "created", session: { id, ref: id, viewsCached: false }, createdAt };
      });
      // A repeat (same identity) inserted its session before its task met the conflict: drop it.
      const orphans = sessionIds.filter((_, i) => outcomes[i]!.kind === "duplicate");
      if (orphans.length > 0) await client.query("DELETE FROM sessions WHERE id = ANY($1::uuid[])", [orphans]);
      await Promise.all(items.map((item, i) => (outcomes[i]!.kind === "created" ? item.enqueue() : undefined)));
      await client.query("COMMIT");
      return outcomes;
    });
  }

  /** A submit into a named session: the session is resolved (or created under that name) in the transaction. */
  #insertInSession(task: NewTask, sessionRef: string, enqueue: () => Promise<void>): Promise<SubmitOutcome> {
    return this.#tracked([task.id], () => this.#insertInSessionTx(task, sessionRef, enqueue));
  }

  /** Runs a submit transaction, known to this process's worker as open until it ends. */
  #tracked<T>(taskIds: string[], transaction: () => Promise<T>): Promise<T> {
    const work = transaction();
    return this.#local ? this.#local.track(taskIds, work) : work;
  }

  #insertInSessionTx(task: NewTask, sessionRef: string, enqueue: () => Promise<void>): Promise<SubmitOutcome> {
    const key = task.idempotency?.keyHash;
    return withClient(this.#pool, async (client) => {
      // A repeat must not wait on its twin's task row while it holds the session row: the twin's
      // final write (or the twin's own submit) updating that task waits for the session row in
      // turn, and PostgreSQL kills one of them as a deadlock — a 500 for concurrent duplicates
      // into one session (tests-e2e/foundation/idempotency.test.ts). So repeats of one identity
      // take turns (advisory lock), and a repeat whose twin is committed stops before the session.
      const identity = key
        ? `; SELECT pg_advisory_xact_lock(hashtextextended(${sqlLiteral(`${task.userId}:${key}`)}, 1))`
        : "";
      await client.query(`BEGIN${identity}; SELECT pg_advisory_xact_lock(hashtextextended(${sqlLiteral(task.id)}, 0))`);
      if (key) {
        const twin = await client.query("SELECT 1 FROM tasks WHERE user_id = $1::uuid AND idempotency_key = $2", [
          task.userId,
          key,
        ]);
        if (twin.rowCount) throw new DuplicateKey();
      }
      const session = await resolveSessionForSubmit(client, task.userId, sessionRef, task.tokenBudget);
      const res = await client.query<{ created_at: Date }>(
        key
          ? `INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent, idempotency_key)
             VALUES ($1::uuid, $2::uuid, $8::uuid, $3, $4, 'QUEUED', $5::jsonb, $6, $7, $9)${ON_KEY_CONFLICT} RETURNING created_at`
          : `INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent)
             VALUES ($1::uuid, $2::uuid, $8::uuid, $3, $4, 'QUEUED', $5::jsonb, $6, $7) RETURNING created_at`,
        [
          task.id,
          task.userId,
          task.query,
          task.requestedMode,
          JSON.stringify(task.spec),
          task.traceId,
          task.traceparent,
          session.id,
          ...(key ? [key] : []),
        ],
      );
      const row = res.rows[0];
      if (!row) throw new DuplicateKey();
      await enqueue();
      await client.query("COMMIT");
      return { kind: "created", session, createdAt: row.created_at };
    });
  }
}

/** The pooled connections on which PREPARE_NEW_SESSIONS has run. */
const prepared = new WeakSet<object>();
const DUPLICATE_PREPARED_STATEMENT = "42P05";

/**
 * Every task of a batch and its new session in one statement, planned once per connection
 * (docs/performance.md "Prepared statements"): the rows come as one JSON array, so the batch
 * travels as a single literal in the simple protocol together with BEGIN. The advisory lock on
 * each task id is taken before anything is inserted (a run that arrives before the commit waits
 * on it, run.repository.ts). A task whose identity exists meets ON CONFLICT and is not returned.
 */
const PREPARE_NEW_SESSIONS = `PREPARE tog_submit_new_sessions(jsonb) AS
WITH v AS MATERIALIZED (
  SELECT r.*, pg_advisory_xact_lock(hashtextextended(r.id, 0)) AS locked
  FROM jsonb_to_recordset($1) AS r(id text, user_id uuid, session_id uuid, token_budget integer, query text,
    requested_mode text, spec jsonb, trace_id text, traceparent text, idempotency_key text)
), s AS (
  INSERT INTO sessions (id, user_id, token_budget, task_count) SELECT session_id, user_id, token_budget, 1 FROM v RETURNING id
)
INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id, traceparent, idempotency_key)
SELECT v.id::uuid, v.user_id, s.id, v.query, v.requested_mode, 'QUEUED', v.spec, v.trace_id, v.traceparent, v.idempotency_key
FROM v JOIN s ON s.id = v.session_id${ON_KEY_CONFLICT}
RETURNING id::text, created_at`;
