import type { Db } from "./client.ts";

// A job that every instance schedules and one runs at a time (the event and session retention
// purges). The lock is transaction-level, held by one open transaction for the whole run (a pooled
// client cannot promise that a session lock is released on the connection that took it); the
// work itself runs outside that transaction. If the lock's connection dies, the lock goes with it.

/**
 * Runs `fn` while this connection holds the transaction-level advisory lock `key`; false when
 * another instance holds it. raw: advisory locks are not in Prisma's model API.
 */
export async function withTryAdvisoryLock(
  db: Db,
  key: bigint,
  timeoutMs: number,
  fn: () => Promise<void>,
): Promise<boolean> {
  let locked = false;
  await db.$transaction(
    async (tx) => {
      const [lock] = await tx.$queryRaw<{ locked: boolean }[]>`
          SELECT pg_try_advisory_xact_lock(${key}) AS locked`;
      if (!lock?.locked) return;
      locked = true;
      await fn();
    },
    // The transaction only holds the lock; it must outlive the whole run.
    { timeout: timeoutMs, maxWait: 10_000 },
  );
  return locked;
}
