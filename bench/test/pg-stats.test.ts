import { createTestDatabase, testInfraConfig, type TestDatabase } from "@tog/testkit";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { diffDb, diffWal, PgStats } from "../tasks/lib/pg-stats.ts";

// The history rows of the task bench judge `ownTuples` (docs/performance.md "Limits of the
// bench"): rows read from the project's tables, their indexes and TOAST, without the catalog
// reads that the database-wide counter also holds.

let db: TestDatabase;
let stats: PgStats;
let work: pg.Client;

/** Runs `sql` on the working connection and makes PostgreSQL publish its counters at once. */
async function counted(sql: string): Promise<void> {
  await work.query(sql);
  // PostgreSQL 15 reports a backend's counters at most once a second; this forces the next report.
  await work.query("SELECT pg_stat_force_next_flush()");
  await work.query("SELECT 1");
}

/** The counters' change over `sql`. */
async function delta(sql: string) {
  const before = await stats.db();
  await counted(sql);
  return diffDb(before, await stats.db());
}

beforeAll(async () => {
  db = await createTestDatabase({ migrated: false });
  work = new pg.Client({ connectionString: db.url });
  await work.connect();
  await counted(`CREATE TABLE bench_rows (id int PRIMARY KEY, doc text);
    ALTER TABLE bench_rows ALTER COLUMN doc SET STORAGE EXTERNAL;
    INSERT INTO bench_rows SELECT i, repeat('x', 10) FROM generate_series(1, 500) AS i;
    INSERT INTO bench_rows VALUES (1000, repeat(md5('a'), 1000));`);
  stats = await PgStats.open(testInfraConfig.TEST_DATABASE_ADMIN_URL, db.name, db.url);
});

afterAll(async () => {
  await work?.end();
  await stats?.close();
  await db?.drop();
});

describe("PgStats.ownTuples", () => {
  it("counts the rows a sequential scan of a project table reads", async () => {
    const d = await delta("SELECT count(*) FROM bench_rows WHERE doc = 'y'");
    expect(d.ownTuples).toBe(501);
    expect(d.tuples).toBeGreaterThanOrEqual(501);
  });

  it("counts an index probe and the TOAST chunks of a large value", async () => {
    const d = await delta("SELECT length(doc) FROM bench_rows WHERE id = 1000");
    // The primary-key entry and its heap row, then the value's chunks through the TOAST index.
    expect(d.ownTuples).toBeGreaterThanOrEqual(2 + 2 * 2);
  });

  it("leaves out catalog reads, which the database-wide counter holds", async () => {
    const d = await delta("SELECT count(*) FROM pg_class, pg_attribute WHERE pg_attribute.attrelid = pg_class.oid");
    expect(d.ownTuples).toBe(0);
    expect(d.tuples).toBeGreaterThan(100);
  });
});

describe("PgStats.wal", () => {
  it("counts the WAL records and bytes an insert writes", async () => {
    const before = await stats.wal();
    // 400 rows of ~1 KB each: at least one WAL record and 1 KB per row (other work on the instance only adds)
    await counted("INSERT INTO bench_rows SELECT i, repeat(md5(i::text), 32) FROM generate_series(2001, 2400) AS i");
    const d = diffWal(before, await stats.wal());
    expect(d.records).toBeGreaterThanOrEqual(400);
    expect(d.bytes).toBeGreaterThanOrEqual(400 * 1024);
    expect(d.fpi).toBeGreaterThanOrEqual(0);
  });

  it("counts the WAL flush a synchronous commit waits for", async () => {
    const before = await stats.wal();
    await counted("INSERT INTO bench_rows VALUES (2401, 'sync')");
    expect(diffWal(before, await stats.wal()).syncs).toBeGreaterThanOrEqual(1);
  });
});
