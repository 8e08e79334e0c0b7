import { ForbiddenError, isUuid, newId, NotFoundError } from "@tog/core";
import {
  countTaskOnSession,
  findSessionId,
  insertSession,
  lockSessionForSubmit,
  type Sql,
} from "../sessions/session.repository.ts";

// docs/api.md "Sessions": a session id is a UUID or a client's own string. A UUID names the session
// itself; any other string is an external id kept beside an internal UUID. Either way the
// session is its creator's: another user gets 403, a deleted session 404.

export interface ResolvedSession {
  id: string;
  /** The id as the client used it. */
  ref: string;
  /**
   * Views of the session may be cached (read under the row lock; a session the submit created
   * has none): the submit sends a cache hint after its commit only then.
   */
  viewsCached: boolean;
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
  const find = () => lockSessionForSubmit(sql, ref, userId, byId);
  let row = await find();
  if (!row) {
    await insertSession(sql, {
      id: byId ? ref.toLowerCase() : newId(),
      userId,
      externalId: byId ? null : ref,
      tokenBudget,
      context: byId ? {} : { external_id: ref },
    });
    row = await find();
    if (!row) throw new Error(`session ${ref} could not be created`);
  }
  if (row.user_id !== userId) throw new ForbiddenError();
  if (row.deleted_at !== null) throw new NotFoundError("Session not found");
  await countTaskOnSession(sql, row.id);
  return { id: row.id, ref, viewsCached: row.views_cached };
}

/** The internal id of a session reference for list filters; null when there is none (or it was deleted). */
export function resolveSessionFilter(sql: Sql, ref: string, userId: string): Promise<string | null> {
  return findSessionId(sql, ref, userId, isUuid(ref));
}
