import { v7 } from "uuid";

// Ids of users, tasks and sessions are UUIDs, compared in any case and stored and
// emitted lower-cased. A string that is not one names nothing: callers answer "not found" without
// asking the database (PostgreSQL would refuse it as a uuid anyway).

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID of any version, in any case. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}

/**
 * A new task or session id: a UUID of version 7, whose leading 48 bits are the time in
 * milliseconds, so ids made later sort later. Every index that leads with a task or session id
 * (the tables' primary keys, `task_events` and `task_steps` by task) then takes new entries at its
 * end instead of on a random page of the whole history (docs/performance.md "Time-ordered ids").
 */
export function newId(): string {
  return v7();
}
