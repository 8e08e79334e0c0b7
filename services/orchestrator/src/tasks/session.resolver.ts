import { randomUUID } from "node:crypto";
import { ForbiddenError, NotFoundError } from "@tog/core";
import type { Prisma } from "@tog/db";

// Contract 2.6: a session id is a UUID or a client's own string. A UUID names the session
// itself; any other string is an external id kept beside an internal UUID. Either way the
// session is its creator's: another user gets 403, a deleted session 404.

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export interface ResolvedSession {
  id: string;
  /** The id as the client used it. */
  ref: string;
  created: boolean;
}

type Tx = Prisma.TransactionClient;

interface SessionRow {
  id: string;
  user_id: string;
  deleted_at: Date | null;
}

export async function resolveSessionForSubmit(tx: Tx, userId: string, ref: string | undefined, tokenBudget: number): Promise<ResolvedSession> {
  if (ref === undefined) {
    const id = randomUUID();
    await tx.$executeRaw`INSERT INTO sessions (id, user_id, token_budget) VALUES (${id}::uuid, ${userId}::uuid, ${tokenBudget})`;
    return { id, ref: id, created: true };
  }
  const isUuid = UUID_RE.test(ref);
  const find = () =>
    isUuid
      ? tx.$queryRaw<SessionRow[]>`SELECT id::text, user_id::text, deleted_at FROM sessions WHERE id = ${ref}::uuid FOR UPDATE`
      : tx.$queryRaw<SessionRow[]>`SELECT id::text, user_id::text, deleted_at FROM sessions WHERE external_id = ${ref} FOR UPDATE`;
  let row = (await find())[0];
  let created = false;
  if (!row) {
    const id = isUuid ? ref.toLowerCase() : randomUUID();
    const context = isUuid ? {} : { external_id: ref };
    const inserted = await tx.$executeRaw`
      INSERT INTO sessions (id, user_id, external_id, token_budget, context)
      VALUES (${id}::uuid, ${userId}::uuid, ${isUuid ? null : ref}, ${tokenBudget}, ${JSON.stringify(context)}::jsonb)
      ON CONFLICT DO NOTHING`;
    created = inserted === 1;
    row = (await find())[0];
    if (!row) throw new Error(`session ${ref} could not be created`);
  }
  if (row.user_id !== userId) throw new ForbiddenError();
  if (row.deleted_at !== null) throw new NotFoundError("Session not found");
  return { id: row.id, ref, created };
}

/** The internal id of a session reference for list filters; null when there is none. */
export async function findSessionId(tx: Tx, ref: string): Promise<string | null> {
  const rows = UUID_RE.test(ref)
    ? await tx.$queryRaw<{ id: string }[]>`SELECT id::text FROM sessions WHERE id = ${ref}::uuid`
    : await tx.$queryRaw<{ id: string }[]>`SELECT id::text FROM sessions WHERE external_id = ${ref}`;
  return rows[0]?.id ?? null;
}
