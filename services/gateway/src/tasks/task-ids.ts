import { NotFoundError } from "@tog/core";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const TASK_NOT_FOUND = "Task not found";

/**
 * Task ids are UUIDs. Anything else cannot name a task, so it is answered like an unknown id
 * (404 `Task not found`, not 400) without asking the orchestrator. Returned lower-cased, the
 * form the ids are stored and emitted in.
 */
export function taskIdOrNotFound(id: string): string {
  if (!UUID_RE.test(id)) throw new NotFoundError(TASK_NOT_FOUND);
  return id.toLowerCase();
}
