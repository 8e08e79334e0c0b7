import { isUuid, NotFoundError } from "@tog/core";

export const TASK_NOT_FOUND = "Task not found";

/**
 * Task ids are UUIDs. Anything else cannot name a task, so it is answered like an unknown id
 * (404 `Task not found`, not 400) without asking the orchestrator. Returned lower-cased, the
 * form the ids are stored and emitted in.
 */
export function taskIdOrNotFound(id: string): string {
  if (!isUuid(id)) throw new NotFoundError(TASK_NOT_FOUND);
  return id.toLowerCase();
}
