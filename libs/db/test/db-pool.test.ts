import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";
import { createDbPool, type DbPool } from "../src/index.ts";

// createDbPool's connections plan a named statement once and reuse that plan
// (docs/performance.md "Prepared statements"); left to itself PostgreSQL planned the run's
// statements again on every call.
describe("createDbPool", () => {
  let db: TestDatabase;
  let pool: DbPool;

  beforeAll(async () => {
    db = await createTestDatabase();
    pool = createDbPool({ databaseUrl: db.url, poolMax: 1 });
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  it("runs a named statement on a generic plan from its first call", async () => {
    const text = "SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) AND status = $2";
    for (let i = 0; i < 7; i++) {
      const res = await pool.query<{ n: number }>({ name: "probe", text, values: [[], "RUNNING"] });
      expect(res.rows[0]!.n).toBe(0);
    }
    const { rows } = await pool.query<{ generic: string; custom: string }>(
      "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE name = 'probe'",
    );
    expect(rows).toEqual([{ generic: "7", custom: "0" }]);
  });
});
