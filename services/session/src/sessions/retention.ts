import { startPeriodicJob, type Logger } from "@tog/core";
import { withTryAdvisoryLock, type Db } from "@tog/db";
import { purgeIdleSessions } from "@tog/task-data";

// Session history retention (docs/api.md "Sessions": 30 days by default). A session whose last activity is
// older than SESSION_RETENTION_DAYS is purged for good: its row, its tasks with their steps,
// approvals and signals (foreign-key cascades) and their events in the permanent log. Deleted
// sessions follow the same rule (their data is retained until then). A session with a task that
// has not finished is never purged. The purge works in small batches, each committed on its own;
// every instance schedules it and an advisory lock lets one of them run at a time (the same
// pattern as the event retention in services/orchestrator/src/events/retention.ts). The statements
// are in libs/task-data: the tables are the orchestrator's (docs/architecture.md "Tables").

/** Advisory lock key of the purge ("tog-sess" in ASCII). */
export const SESSION_RETENTION_LOCK_KEY = 0x746f672d73657373n;

export interface SessionRetentionOptions {
  db: Db;
  logger: Logger;
  /** 0 disables the purge. */
  retentionDays: number;
  /** Pause between runs (default 1 h). */
  intervalMs?: number;
  /** Sessions per batch (default 100). */
  batchSize?: number;
  /** Delay before the first run (default 30 s). */
  initialDelayMs?: number;
  /** Longest single run; the rest waits for the next one (default 10 min). */
  maxRunMs?: number;
  /** Told which sessions were purged (their cache entries must go). */
  onPurged?: ((sessionIds: string[]) => Promise<void> | void) | undefined;
}

export interface SessionRetentionResult {
  /** False when another instance held the lock, or the purge is off. */
  ran: boolean;
  sessions: number;
  tasks: number;
  events: number;
}

export interface SessionRetentionJob {
  runOnce(): Promise<SessionRetentionResult>;
  stop(): Promise<void>;
}

export function startSessionRetention(options: SessionRetentionOptions): SessionRetentionJob {
  const { db } = options;
  const logger = options.logger.child({ component: "session-retention" });
  const days = options.retentionDays;
  const intervalMs = options.intervalMs ?? 3_600_000;
  const batchSize = Math.max(1, options.batchSize ?? 100);
  const maxRunMs = options.maxRunMs ?? 600_000;

  async function purge(stopping: () => boolean): Promise<SessionRetentionResult> {
    const result: SessionRetentionResult = { ran: false, sessions: 0, tasks: 0, events: 0 };
    if (days <= 0) return result;
    const startedAt = Date.now();
    result.ran = await withTryAdvisoryLock(db, SESSION_RETENTION_LOCK_KEY, maxRunMs + 60_000, async () => {
      while (!stopping() && Date.now() - startedAt < maxRunMs) {
        const batch = await purgeIdleSessions(db, days, batchSize);
        result.sessions += batch.sessions.length;
        result.tasks += batch.tasks;
        result.events += batch.events;
        if (batch.sessions.length > 0) await options.onPurged?.(batch.sessions);
        if (batch.sessions.length < batchSize) break;
      }
    });
    if (!result.ran) logger.debug("session retention skipped: another instance is purging");
    else if (result.sessions > 0)
      logger.info({ ...result, retentionDays: days, ms: Date.now() - startedAt }, "idle sessions purged");
    return result;
  }

  if (days > 0) {
    logger.info({ retentionDays: days, intervalMs, batchSize }, "session retention scheduled");
  } else {
    logger.info("session retention disabled (SESSION_RETENTION_DAYS=0)");
  }

  return startPeriodicJob({
    name: "session retention",
    logger,
    intervalMs,
    initialDelayMs: options.initialDelayMs ?? 30_000,
    enabled: days > 0,
    run: purge,
  });
}
