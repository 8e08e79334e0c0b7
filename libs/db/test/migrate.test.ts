import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { migrate, readMigrations } from "@tog/db";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";

describe("db:migrate", () => {
  let db: TestDatabase;
  beforeAll(async () => {
    db = await createTestDatabase({ migrated: false });
  });
  afterAll(async () => db?.drop());

  it("applies every migration once, concurrently safe, with Prisma bookkeeping", async () => {
    const runs = await Promise.all([1, 2, 3].map(() => migrate({ databaseUrl: db.url })));
    const files = await readMigrations();
    expect(runs.flat().sort()).toEqual(files.map((f) => f.name).sort());
    expect(await migrate({ databaseUrl: db.url })).toEqual([]);

    const c = new pg.Client({ connectionString: db.url });
    await c.connect();
    try {
      const { rows } = await c.query(
        `SELECT migration_name, checksum, finished_at, applied_steps_count FROM "_prisma_migrations" ORDER BY migration_name`,
      );
      expect(rows.map((r) => [r.migration_name, r.checksum])).toEqual(files.map((f) => [f.name, f.checksum]));
      for (const r of rows) {
        expect(r.finished_at).toBeInstanceOf(Date);
        expect(r.applied_steps_count).toBe(1);
      }
      // A migration edited after it was applied is refused, as Prisma does.
      await c.query(`UPDATE "_prisma_migrations" SET checksum = 'x' WHERE migration_name = $1`, [files[0]!.name]);
      await expect(migrate({ databaseUrl: db.url })).rejects.toThrow(/checksum mismatch/);
    } finally {
      await c.end();
    }
  });
});
