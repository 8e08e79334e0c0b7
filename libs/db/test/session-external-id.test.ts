import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";

// sessions_user_id_external_id_key is partial (migration 20261202000000): a session without an
// external id, the default of a submit, costs it no entry, while a named session stays unique
// per user and is found through it (docs/performance.md "Index entries for named sessions only").

const INDEX = "sessions_user_id_external_id_key";

describe("the sessions' external id index", () => {
  let db: TestDatabase;
  let client: pg.Client;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    client.on("error", () => undefined);
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });

  async function newUser(): Promise<string> {
    const id = randomUUID();
    await client.query("INSERT INTO users (id, name) VALUES ($1, $2)", [id, `u-${id}`]);
    return id;
  }
  const indexPages = async () =>
    Number((await client.query<{ n: string }>(`SELECT pg_relation_size($1) / 8192 AS n`, [INDEX])).rows[0]!.n);

  it("holds no entry for unnamed sessions", async () => {
    const def = (await client.query<{ def: string }>(`SELECT pg_get_indexdef($1::regclass) AS def`, [INDEX])).rows[0]!;
    expect(def.def).toContain("UNIQUE");
    expect(def.def).toContain("WHERE (external_id IS NOT NULL)");
    const user = await newUser();
    const before = await indexPages();
    await client.query(
      `INSERT INTO sessions (id, user_id, token_budget) SELECT gen_random_uuid(), $1, 1000 FROM generate_series(1, 2000)`,
      [user],
    );
    // 2,000 entries would take several leaf pages; the index is still its metapage alone.
    expect(await indexPages()).toBe(before);
    expect(before).toBe(1);
  });

  it("keeps a named session unique per user, and finds it through the index", async () => {
    const [alice, bob] = [await newUser(), await newUser()];
    const insert = (user: string, name: string) =>
      client.query(
        `INSERT INTO sessions (id, user_id, external_id, token_budget) VALUES ($1, $2, $3, 1000) ON CONFLICT DO NOTHING`,
        [randomUUID(), user, name],
      );
    expect((await insert(alice, "chat-1")).rowCount).toBe(1);
    expect((await insert(alice, "chat-1")).rowCount).toBe(0);
    expect((await insert(bob, "chat-1")).rowCount).toBe(1);
    await expect(
      client.query(`INSERT INTO sessions (id, user_id, external_id, token_budget) VALUES ($1, $2, 'chat-1', 1000)`, [
        randomUUID(),
        alice,
      ]),
    ).rejects.toMatchObject({ code: "23505", constraint: INDEX });
    expect(await indexPages()).toBeGreaterThan(1);

    await client.query("BEGIN");
    try {
      await client.query("SET LOCAL enable_seqscan = off");
      const plan = await client.query<{ "QUERY PLAN": string }>(
        `EXPLAIN SELECT id FROM sessions WHERE user_id = $1::uuid AND external_id = $2`,
        [alice, "chat-1"],
      );
      expect(plan.rows.map((r) => r["QUERY PLAN"]).join("\n")).toContain(INDEX);
    } finally {
      await client.query("ROLLBACK");
    }
  });
});
