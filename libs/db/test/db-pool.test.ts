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

  it("a plan cached while the table was empty does not scan it once it has grown", async () => {
    // The shape of the run's checkpoint fence: the batch's rows joined to their tasks.
    const text = `SELECT t.id FROM unnest($1::uuid[], $2::text[]) AS v(id, owner)
      JOIN tasks t ON t.id = v.id AND t.lease_owner = v.owner AND t.status = 'RUNNING'`;
    const client = await pool.connect();
    try {
      await client.query({ name: "fence", text, values: [[], []] });
      // Thousands of rows later, never analyzed (as with autovacuum off).
      await client.query(`INSERT INTO users (id, name) VALUES ('00000000-0000-0000-0000-0000000000aa', 'u')`);
      await client.query(`INSERT INTO sessions (id, user_id, token_budget)
        VALUES ('00000000-0000-0000-0000-0000000000bb', '00000000-0000-0000-0000-0000000000aa', 1)`);
      await client.query(`INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id, lease_owner)
        SELECT gen_random_uuid(), '00000000-0000-0000-0000-0000000000aa', '00000000-0000-0000-0000-0000000000bb',
               'q', 'RUNNING', '{}', repeat('0', 32), 'w' FROM generate_series(1, 3000)`);
      const { rows: ids } = await client.query<{ id: string }>("SELECT id::text FROM tasks LIMIT 2");
      await client.query("BEGIN");
      const res = await client.query({ name: "fence", text, values: [ids.map((r) => r.id), ["w", "w"]] });
      expect(res.rowCount).toBe(2);
      const { rows } = await client.query<{ seq: string }>(
        "SELECT seq_tup_read AS seq FROM pg_stat_xact_user_tables WHERE relname = 'tasks'",
      );
      expect(rows).toEqual([{ seq: "0" }]);
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
  });
});
