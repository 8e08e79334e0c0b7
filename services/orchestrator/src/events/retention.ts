import { startPeriodicJob, type Logger } from "@tog/core";
import { withTryAdvisoryLock, type Db } from "@tog/db";
import { deleteEventsOlderThan } from "./event.repository.ts";

// Purges task_events older than the retention (by event timestamp), in small batches so no
// statement holds many row locks or runs long. Every orchestrator instance runs the job; an
// advisory lock lets one of them purge at a time and the others skip that round.
//
// The lock is a transaction-level lock held by one open transaction for the whole run (a
// pooled client cannot promise that a session lock is released on the connection that took
// it); the batches themselves run outside that transaction, each committed on its own, so a
// long purge neither holds a snapshot nor loses finished work when interrupted. If the lock's
// connection dies, the lock goes with it: at worst two instances purge the same old rows,
// which is harmless.

/** Advisory lock key of the purge ("tog-evrt" in ASCII). */
export const EVENT_RETENTION_LOCK_KEY = 0x746f672d65767274n;

export interface RetentionJobOptions {
  db: Db;
  logger: Logger;
  /** Events older than this are deleted; 0 disables the purge (default 90). */
  eventRetentionDays?: number;
  /** Pause between runs (default 1 h). */
  intervalMs?: number;
  /** Rows per DELETE (default 5000). */
  batchSize?: number;
  /** Delay before the first run (default 30 s), so frequent restarts still purge. */
  initialDelayMs?: number;
  /** Longest single run; a bigger backlog continues at the next run (default 10 min). */
  maxRunMs?: number;
}

export interface RetentionRunResult {
  /** False when another instance held the lock, or the purge is disabled. */
  ran: boolean;
  deleted: number;
}

export interface RetentionJob {
  /** One purge round now (tests, operators). Concurrent calls in one process share a round. */
  runOnce(): Promise<RetentionRunResult>;
  /** Stops the schedule; a running round stops after its current batch. */
  stop(): Promise<void>;
}

export function startRetentionJob(options: RetentionJobOptions): RetentionJob {
  const { db } = options;
  const logger = options.logger.child({ component: "event-retention" });
  const days = options.eventRetentionDays ?? 90;
  const intervalMs = options.intervalMs ?? 3_600_000;
  const batchSize = Math.max(1, options.batchSize ?? 5_000);
  const maxRunMs = options.maxRunMs ?? 600_000;

  async function purge(stopping: () => boolean): Promise<RetentionRunResult> {
    if (days <= 0) return { ran: false, deleted: 0 };
    let deleted = 0;
    const startedAt = Date.now();
    const ran = await withTryAdvisoryLock(db, EVENT_RETENTION_LOCK_KEY, maxRunMs + 60_000, async () => {
      while (!stopping() && Date.now() - startedAt < maxRunMs) {
        const n = await deleteEventsOlderThan(db, days, batchSize);
        deleted += n;
        if (n < batchSize) break;
      }
    });
    if (!ran) logger.debug("event retention skipped: another instance is purging");
    else if (deleted > 0)
      logger.info({ deleted, retentionDays: days, ms: Date.now() - startedAt }, "old events purged");
    return { ran, deleted };
  }

  if (days > 0) {
    logger.info({ retentionDays: days, intervalMs, batchSize }, "event retention scheduled");
  } else {
    logger.info("event retention disabled (EVENT_RETENTION_DAYS=0)");
  }

  return startPeriodicJob({
    name: "event retention",
    logger,
    intervalMs,
    initialDelayMs: options.initialDelayMs ?? 30_000,
    enabled: days > 0,
    run: purge,
  });
}
