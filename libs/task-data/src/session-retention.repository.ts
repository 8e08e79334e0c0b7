import type { Db } from "@tog/db";

// The session retention's purge (services/session/src/sessions/retention.ts): expired sessions
// with their tasks and events. A statement of the orchestrator's tables, so it lives in this lib.

export interface PurgedBatch {
  sessions: string[];
  tasks: number;
  events: number;
}

/**
 * Purges up to `batchSize` sessions idle for more than `days` days with no unfinished task, in
 * one transaction. raw: `FOR UPDATE SKIP LOCKED` and set-based deletes, which Prisma's model API
 * cannot express.
 */
export function purgeIdleSessions(db: Db, days: number, batchSize: number): Promise<PurgedBatch> {
  return db.$transaction(async (tx) => {
    const expired = await tx.$queryRaw<{ id: string }[]>`
        SELECT s.id::text FROM sessions s
        WHERE s.last_activity_at < now() - make_interval(days => ${days}::int)
          AND NOT EXISTS (SELECT 1 FROM tasks t WHERE t.session_id = s.id AND t.status IN ('QUEUED', 'RUNNING'))
        ORDER BY s.last_activity_at
        LIMIT ${batchSize}::int
        FOR UPDATE SKIP LOCKED`;
    const ids = expired.map((r) => r.id);
    if (ids.length === 0) return { sessions: [], tasks: 0, events: 0 };
    // task_events has no foreign key (the persister may store an event before its task row is
    // visible), so its rows go explicitly; the rest cascades from sessions.
    const events = await tx.$executeRaw`
        DELETE FROM task_events WHERE task_id IN (SELECT id FROM tasks WHERE session_id = ANY(${ids}::uuid[]))`;
    const tasks = await tx.$queryRaw<
      { n: bigint }[]
    >`SELECT count(*) AS n FROM tasks WHERE session_id = ANY(${ids}::uuid[])`;
    await tx.$executeRaw`DELETE FROM sessions WHERE id = ANY(${ids}::uuid[])`;
    return { sessions: ids, tasks: Number(tasks[0]?.n ?? 0), events };
  });
}
