// Ids of users, tasks and sessions are UUIDs, compared in any case and stored and
// emitted lower-cased. A string that is not one names nothing: callers answer "not found" without
// asking the database (PostgreSQL would refuse it as a uuid anyway).

const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

/** True for a UUID of any version, in any case. */
export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value);
}
