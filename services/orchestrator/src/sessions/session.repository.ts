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
  /** Views of it may be cached: the submit hints after its commit (docs/decisions.md "Sessions", Cache). */
  views_cached: boolean;
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
      ? "SELECT id::text, user_id::text, deleted_at, views_cached FROM sessions WHERE id = $1::uuid FOR UPDATE"
      : "SELECT id::text, user_id::text, deleted_at, views_cached FROM sessions WHERE user_id = $2::uuid AND external_id = $1 FOR UPDATE",
    byId ? [ref] : [ref, userId],
  );
  return res.rows[0];
}

/** Inserts a session unless one with that id or external id exists. */
export async function insertSession(
  sql: Sql,
  s: { id: string; userId: string; externalId: string | null; tokenBudget: number; context: Record<string, unknown> },
): Promise<void> {
  await sql.query(
    `INSERT INTO sessions (id, user_id, external_id, token_budget, context) VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb)
       ON CONFLICT DO NOTHING`,
    [s.id, s.userId, s.externalId, s.tokenBudget, JSON.stringify(s.context)],
  );
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

export interface TurnRow {
  id: string;
  query: string;
  result: string;
}

export interface SessionBudgetRow {
  token_budget: number;
  tokens_used: number;
}

/** What a pool or client offers for a named (prepared) statement. */
export interface NamedSql {
  query<R extends object>(config: { name: string; text: string; values: unknown[] }): Promise<{ rows: R[] }>;
}

export interface RunContextQuery {
  sessionId: string;
  createdAt: Date;
  taskId: string;
  /** Newest turns to read. */
  tail: number;
  /** Oldest turns to read when the tail is full. */
  head: number;
}

export interface RunContextRow {
  budget: SessionBudgetRow | undefined;
  turns: (TurnRow & { recent: boolean })[];
}

// The session rows and memory windows (migration 20261125030000_session_window) of several runs
// in one statement: a run needs both before its first model call, and the runs of a worker that
// ask at the same time share the round trip (SessionMemory). Named, so it is planned once per
// pooled connection (docs/performance.md "Prepared statements"). The session lookup is a lateral
// subquery behind OFFSET 0, so it stays an index probe per run whatever the generic plan
// estimates; WITH ORDINALITY keeps each window's order (tail newest first, then head oldest first).
const RUN_CONTEXTS_SQL = `SELECT q.n::int AS n, s.token_budget, s.tokens_used, w.id::text AS id, w.query, w.result, w.recent
  FROM unnest($1::uuid[], $2::timestamptz[], $3::uuid[], $4::int[], $5::int[])
    WITH ORDINALITY AS q(session_id, created_at, task_id, tail, head, n)
  CROSS JOIN LATERAL (SELECT token_budget, tokens_used FROM sessions WHERE id = q.session_id OFFSET 0) s
  LEFT JOIN LATERAL session_window(q.session_id, q.created_at, q.task_id, q.tail, q.head)
    WITH ORDINALITY AS w(id, query, result, recent, k) ON true
  ORDER BY q.n, w.k`;

/**
 * What runs read of their sessions, in one statement, one result per query in order: the token
 * budget and what the session's finished tasks used (undefined when the session is gone), and
 * the memory window before the task — its newest `tail` completed turns with a result (newest
 * first, `recent`), and its oldest `head` ones (oldest first) when the tail is full.
 */
export async function readRunContexts(sql: NamedSql, qs: readonly RunContextQuery[]): Promise<RunContextRow[]> {
  const res = await sql.query<
    SessionBudgetRow & { n: number; id: string | null; query: string; result: string; recent: boolean }
  >({
    name: "run-contexts",
    text: RUN_CONTEXTS_SQL,
    values: [
      qs.map((q) => q.sessionId),
      qs.map((q) => q.createdAt),
      qs.map((q) => q.taskId),
      qs.map((q) => q.tail),
      qs.map((q) => q.head),
    ],
  });
  const out: RunContextRow[] = qs.map(() => ({ budget: undefined, turns: [] }));
  for (const r of res.rows) {
    const row = out[r.n - 1]!;
    row.budget ??= { token_budget: r.token_budget, tokens_used: r.tokens_used };
    if (r.id !== null) row.turns.push({ id: r.id, query: r.query, result: r.result, recent: r.recent });
  }
  return out;
}

/** The session's token budget and what its finished tasks used; undefined when it is gone. */
export async function readSessionBudget(sql: NamedSql, sessionId: string): Promise<SessionBudgetRow | undefined> {
  const { rows } = await sql.query<SessionBudgetRow>({
    name: "session-budget",
    text: "SELECT token_budget, tokens_used FROM sessions WHERE id = $1::uuid",
    values: [sessionId],
  });
  return rows[0];
}
