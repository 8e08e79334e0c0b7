import { randomUUID } from "node:crypto";
import { ForbiddenError, isUuid, NotFoundError } from "@tog/core";

// docs/api.md "Sessions": a session id is a UUID or a client's own string. A UUID names the session
// itself; any other string is an external id kept beside an internal UUID. Either way the
// session is its creator's: another user gets 403, a deleted session 404.

/** What the resolver needs of a pg client or pool. */
export interface Sql {
  query<R extends object = Record<string, unknown>>(
    text: string,
    values?: unknown[],
  ): Promise<{ rows: R[]; rowCount: number | null }>;
}

export interface ResolvedSession {
  id: string;
  /** The id as the client used it. */
  ref: string;
  created: boolean;
}

interface SessionRow {
  id: string;
  user_id: string;
  deleted_at: Date | null;
}

/**
 * Finds (locking it) or creates the session a submission names. Must run inside the submit
 * transaction; counts the task on the session.
 */
export async function resolveSessionForSubmit(
  sql: Sql,
  userId: string,
  ref: string,
  tokenBudget: number,
): Promise<ResolvedSession> {
  const byId = isUuid(ref);
  const find = async () =>
    (
      await sql.query<SessionRow>(
        byId
          ? "SELECT id::text, user_id::text, deleted_at FROM sessions WHERE id = $1::uuid FOR UPDATE"
          : "SELECT id::text, user_id::text, deleted_at FROM sessions WHERE user_id = $2::uuid AND external_id = $1 FOR UPDATE",
        byId ? [ref] : [ref, userId],
      )
    ).rows[0];
  let row = await find();
  let created = false;
  if (!row) {
    const id = byId ? ref.toLowerCase() : randomUUID();
    const inserted = await sql.query(
      `INSERT INTO sessions (id, user_id, external_id, token_budget, context) VALUES ($1::uuid, $2::uuid, $3, $4, $5::jsonb)
       ON CONFLICT DO NOTHING`,
      [id, userId, byId ? null : ref, tokenBudget, JSON.stringify(byId ? {} : { external_id: ref })],
    );
    created = inserted.rowCount === 1;
    row = await find();
    if (!row) throw new Error(`session ${ref} could not be created`);
  }
  if (row.user_id !== userId) throw new ForbiddenError();
  if (row.deleted_at !== null) throw new NotFoundError("Session not found");
  await sql.query(
    "UPDATE sessions SET task_count = task_count + 1, updated_at = now(), last_activity_at = now() WHERE id = $1::uuid",
    [row.id],
  );
  return { id: row.id, ref, created };
}

/** The internal id of a session reference for list filters; null when there is none (or it was deleted). External ids are per user. */
export async function findSessionId(sql: Sql, ref: string, userId: string): Promise<string | null> {
  const rows = isUuid(ref)
    ? await sql.query<{ id: string }>("SELECT id::text FROM sessions WHERE id = $1::uuid AND deleted_at IS NULL", [ref])
    : await sql.query<{ id: string }>(
        "SELECT id::text FROM sessions WHERE user_id = $2::uuid AND external_id = $1 AND deleted_at IS NULL",
        [ref, userId],
      );
  return rows.rows[0]?.id ?? null;
}
