import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { createDbClient, createDbPool, type Db, type DbPool } from "@tog/db";
import { buildEvent } from "@tog/events";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";
import {
  EVENT_RETENTION_LOCK_KEY,
  insertEventRows,
  startRetentionJob,
  toEventRow,
  type EventRow,
  type RetentionJob,
} from "../../src/events/index.ts";
import { TRACE_ID, newTaskId, silentLogger } from "./helpers.ts";

const DAY = 86_400_000;

describe("event retention", () => {
  let tdb: TestDatabase;
  let db: Db;
  let pool: DbPool;
  let otherDb: Db;
  const jobs: RetentionJob[] = [];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDbClient({ databaseUrl: tdb.url, poolMax: 4 });
    pool = createDbPool({ databaseUrl: tdb.url, poolMax: 2 });
    otherDb = createDbClient({ databaseUrl: tdb.url, poolMax: 4 });
  });
  afterEach(async () => {
    await Promise.all(jobs.splice(0).map((j) => j.stop()));
    await db.$executeRaw`DELETE FROM task_events`;
  });
  afterAll(async () => {
    await db.$disconnect();
    await pool.end();
    await otherDb.$disconnect();
    await tdb.drop();
  });

  /** `count` events of one task, `ageDays` old. */
  function rows(count: number, ageDays: number): EventRow[] {
    const taskId = newTaskId();
    const now = Date.now();
    return Array.from({ length: count }, (_, i) => {
      const event = buildEvent({
        workflow_id: taskId,
        type: "PROGRESS",
        agent_id: "orchestrator",
        message: "p",
        seq: i + 1,
        trace_id: TRACE_ID,
        data: { percentage: 0, current_step: i, total_steps: count, current_task: "t" },
        at: now - ageDays * DAY + i,
      });
      const r = toEventRow(JSON.stringify(event));
      if (!r.ok) throw new Error(r.reason);
      return r.row;
    });
  }

  const count = async () => (await db.$queryRaw<{ n: number }[]>`SELECT count(*)::int AS n FROM task_events`)[0]!.n;
  const oldest = async () =>
    (
      await db.$queryRaw<
        { days: number }[]
      >`SELECT extract(day FROM now() - min("timestamp"))::int AS days FROM task_events`
    )[0]!.days;

  const start = (database: Db, batchSize: number) => {
    const job = startRetentionJob({
      db: database,
      logger: silentLogger,
      eventRetentionDays: 90,
      batchSize,
      initialDelayMs: 3_600_000,
    });
    jobs.push(job);
    return job;
  };

  it("deletes only events older than the retention, in batches", async () => {
    await insertEventRows(pool, [...rows(230, 120), ...rows(40, 91), ...rows(50, 89), ...rows(60, 1)]);
    const job = start(db, 7);
    expect(await job.runOnce()).toEqual({ ran: true, deleted: 270 });
    expect(await count()).toBe(110);
    expect(await oldest()).toBeLessThan(90);
    expect(await job.runOnce()).toEqual({ ran: true, deleted: 0 });
  });

  it("skips the round while another instance holds the purge lock", async () => {
    await insertEventRows(pool, rows(20, 100));
    const job = start(db, 100);
    const result = await otherDb.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(${EVENT_RETENTION_LOCK_KEY})`;
      return job.runOnce();
    });
    expect(result).toEqual({ ran: false, deleted: 0 });
    expect(await count()).toBe(20);
    // Released with the other instance's transaction.
    expect(await job.runOnce()).toEqual({ ran: true, deleted: 20 });
  });

  it("lets only one of two concurrent instances purge", async () => {
    await insertEventRows(pool, rows(4_000, 100));
    const a = start(db, 50);
    const b = start(otherDb, 50);
    const results = await Promise.all([a.runOnce(), b.runOnce()]);
    expect(results.filter((r) => r.ran)).toHaveLength(1);
    expect(results.reduce((n, r) => n + r.deleted, 0)).toBe(4_000);
    expect(await count()).toBe(0);
  });

  it("keeps everything when the retention is 0", async () => {
    await insertEventRows(pool, rows(5, 1_000));
    const job = startRetentionJob({ db, logger: silentLogger, eventRetentionDays: 0 });
    jobs.push(job);
    expect(await job.runOnce()).toEqual({ ran: false, deleted: 0 });
    expect(await count()).toBe(5);
  });

  it("runs on its schedule and stops", async () => {
    await insertEventRows(pool, rows(30, 100));
    const job = startRetentionJob({
      db,
      logger: silentLogger,
      eventRetentionDays: 90,
      initialDelayMs: 10,
      intervalMs: 60_000,
    });
    jobs.push(job);
    const deadline = Date.now() + 5_000;
    while ((await count()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 25));
    expect(await count()).toBe(0);
    await job.stop();
  });
});
