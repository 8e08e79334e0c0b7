import { isUuid, NotFoundError } from "@tog/core";
import type { Db } from "@tog/db";
import { findTaskOwner } from "@tog/task-data";

// Who may stream a task: the user who submitted the task. Unknown
// tasks and other users' tasks get the same 404 `Task not found`, like the gateway's
// task reads: a stream must not reveal that someone else's task exists. The gateway answers a
// submission only after the task row is committed, so a client streaming a task id it was
// given never races the row; a missing row means an unknown id.
//
// Owners never change, so positive answers are cached (bounded); misses are not cached.

export interface TaskOwners {
  /** The owner's user id, or null when no such task exists. */
  ownerOf(taskId: string): Promise<string | null>;
}

export function createTaskOwners(options: { db: Db; cacheSize?: number }): TaskOwners {
  const { db } = options;
  const max = options.cacheSize ?? 50_000;
  const cache = new Map<string, string>();
  return {
    async ownerOf(taskId) {
      if (!isUuid(taskId)) return null;
      const id = taskId.toLowerCase();
      const hit = cache.get(id);
      if (hit !== undefined) return hit;
      const owner = await findTaskOwner(db, id);
      if (owner !== null) {
        cache.set(id, owner);
        if (cache.size > max) cache.delete(cache.keys().next().value!);
      }
      return owner;
    },
  };
}

/** Resolves when `userId` owns the task; NotFoundError (404 `Task not found`) otherwise. */
export async function assertOwner(owners: TaskOwners, taskId: string, userId: string): Promise<void> {
  const owner = await owners.ownerOf(taskId);
  if (owner === null || owner !== userId.toLowerCase()) throw new NotFoundError("Task not found");
}
