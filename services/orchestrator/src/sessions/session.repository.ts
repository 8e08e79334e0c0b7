// The orchestrator's statements on `sessions` (it owns the table: docs/architecture.md "Tables"):
// the session a submit resolves or creates, the list filter's lookup, and what a run reads of its
// session (budget, earlier turns). All raw on a pg client or pool: they run inside the submit
// transaction or once per task, and skip Prisma's query path (docs/performance.md "Submit", "Run").
// The session service's statements on the same table are in libs/task-data.

/** What these statements need of a pg client (inside a transaction) or pool. */
export interface Sql {
  query<R extends object = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface SessionOwnerRow {
  id: string;
  user_id: string;
  deleted_at: Date | null;
}

/** The session a reference names (a UUID, or the user's external id), row-locked for the submit. */
export async function lockSessionForSubmit(
  sql: Sql,
  ref: string,
  userId: string,
  byId: boolean,
): Promise<SessionOwnerRow | undefined> {
  const res = await sql.query<SessionOwnerRow>(
    byId
      ? "SELECT id::text, user_id::text, deleted_at FROM sessions WHERE id = $1::uuid FOR UPDATE"
      : "SELECT id::text, user_id::text, deleted_at FROM sessions WHERE user_id = $2::uuid AND external_id = $1 FOR UPDATE",
    byId ? [ref] : [ref, userId],
  );
  return res.rows[0];
}

/** Inserts a session unless one with that id or external id exists; true when this call created it. */
export async function insertSession(
  sql: Sql,
  s: { id: string; userId: string; externalId: string | null; tokenBudget: number; context: Record<string, unknown> },
): Promise<boolean> {
  const inserted = await sql.query(
    `INSERT INTO sessions (id, user_id, external_id, token_budget, context) VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb)
       ON CONFLICT DO NOTHING`,
    [s.id, s.userId, s.externalId, s.tokenBudget, JSON.stringify(s.context)],
  );
  return inserted.rowCount === 1;
}

/** Counts a submitted task on its session (`task_count`, activity). */
export async function countTaskOnSession(sql: Sql, sessionId: string): Promise<void> {
  await sql.query(
    "UPDATE sessions SET task_count = task_count + 1, updated_at = now(), last_activity_at = now() WHERE id = $1::uuid",
    [sessionId],
  );
}

/** The internal id of a session reference for list filters; null when there is none (or it was deleted). External ids are per user. */
export async function findSessionId(sql: Sql, ref: string, userId: string, byId: boolean): Promise<string | null> {
  const rows = byId
    ? await sql.query<{ id: string }>("SELECT id::text FROM sessions WHERE id = $1::uuid AND deleted_at IS NULL", [ref])
    : await sql.query<{ id: string }>(
        "SELECT id::text FROM sessions WHERE user_id = $2::uuid AND external_id = $1 AND deleted_at IS NULL",
        [ref, userId],
      );
  return rows.rows[0]?.id ?? null;
}

/** The session's token budget and what its finished tasks used; undefined when it is gone. */
export async function readSessionBudget(
  sql: Sql,
  sessionId: string,
): Promise<{ token_budget: number; tokens_used: number } | undefined> {
  const { rows } = await sql.query<{ token_budget: number; tokens_used: number }>(
    "SELECT token_budget, tokens_used FROM sessions WHERE id = $1::uuid",
    [sessionId],
  );
  return rows[0];
}

export interface TurnRow {
  id: string;
  query: string;
  result: string;
}

/**
 * The memory window of a session before this task in one statement: its newest `tail` completed
 * turns with a result (newest first, `recent`), and its oldest `head` ones (oldest first) when the
 * tail is full.
 */
export async function sessionWindow(
  sql: Sql,
  q: { sessionId: string; createdAt: Date; taskId: string; tail: number; head: number },
): Promise<(TurnRow & { recent: boolean })[]> {
  // In index order whatever the statistics say (migration 20261125030000_session_window).
  const res = await sql.query<TurnRow & { recent: boolean }>(
    "SELECT id::text, query, result, recent FROM session_window($1::uuid, $2, $3::uuid, $4, $5)",
    [q.sessionId, q.createdAt, q.taskId, q.tail, q.head],
  );
  return res.rows;
}
