import type { Db } from "@tog/db";

/** The user who submitted the task, or null when there is no such task. `taskId` must be a UUID. */
export async function findTaskOwner(db: Db, taskId: string): Promise<string | null> {
  const row = await db.task.findUnique({ where: { id: taskId }, select: { userId: true } });
  return row?.userId ?? null;
}
