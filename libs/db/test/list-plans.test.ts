import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";

// The page functions of migration 20261124160000_list_plans must read a page in index order
// even where PostgreSQL's statistics know nothing of the user: rows written after the last
// ANALYZE, as on a database whose autovacuum is behind or off. The same query written plainly
// reads the user's whole history there (checked below, so this test would notice a planner that
// no longer needs the functions).

const ROWS = 20_000;

/** A database of its own, migrated, with one connection. */
async function openDatabase(): Promise<{ db: TestDatabase; client: pg.Client }> {
  const db = await createTestDatabase();
  const client = new pg.Client({ connectionString: db.url });
  client.on("error", () => undefined);
  await client.connect();
  return { db, client };
}

async function closeDatabase(db: TestDatabase | undefined, client: pg.Client | undefined): Promise<void> {
  await client?.end();
  await db?.drop();
}

/** Shared buffers touched to run `sql` (after one warm-up run, so catalog lookups do not count). */
async function buffers(client: pg.Client, sql: string, params: unknown[]): Promise<number> {
  await client.query(sql, params);
  const { rows } = await client.query<{
    "QUERY PLAN": { Plan: { "Shared Hit Blocks": number; "Shared Read Blocks": number } }[];
  }>(`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${sql}`, params);
  const plan = rows[0]!["QUERY PLAN"][0]!.Plan;
  return plan["Shared Hit Blocks"] + plan["Shared Read Blocks"];
}

describe("list pages whatever the statistics say", () => {
  let db: TestDatabase;
  let client: pg.Client;
  const user = randomUUID();
  let session: string;

  beforeAll(async () => {
    ({ db, client } = await openDatabase());
    const other = randomUUID();
    for (const id of [other, user]) await client.query("INSERT INTO users (id, name) VALUES ($1, 'u')", [id]);
    // Someone else's history, analyzed; then this user's rows, never analyzed.
    await client.query(
      "INSERT INTO sessions (id, user_id, token_budget) SELECT gen_random_uuid(), $1, 1000 FROM generate_series(1, 500)",
      [other],
    );
    await client.query("ANALYZE");
    await client.query(
      `INSERT INTO sessions (id, user_id, token_budget, last_activity_at) SELECT gen_random_uuid(), $1, 1000, '2026-01-01' FROM generate_series(1, $2::int)`,
      [user, ROWS],
    );
    session = (await client.query<{ id: string }>("SELECT id FROM sessions WHERE user_id = $1 LIMIT 1", [user]))
      .rows[0]!.id;
    // One task per session, every fourth in the first session. Numbered in one pass: a lateral
    // OFFSET per row is quadratic and took minutes on a slow CI host.
    await client.query(
      `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id, result, created_at)
       SELECT gen_random_uuid(), $1, CASE WHEN g % 4 = 0 THEN $2::uuid ELSE s.id END, 'q', 'COMPLETED', '{}', repeat('0', 32), 'r', '2026-01-01'
       FROM (SELECT id, row_number() OVER () AS g FROM sessions WHERE user_id = $1) s`,
      [user, session],
    );
  }, 120_000);

  afterAll(() => closeDatabase(db, client));

  // The plain sessions query used to be the example: with no statistics of the user it read the
  // user's rows through sessions_user_id_external_id_key and sorted them all. That index is partial
  // since migration 20261202000000, so that plan is gone (23 buffers); the filtered task list
  // still reads the history when written plainly.
  it("the plain query reads the whole history here (the case the functions exist for)", async () => {
    const plain = await buffers(
      client,
      "SELECT id FROM tasks WHERE user_id = $1 AND status = 'COMPLETED' ORDER BY created_at DESC, id DESC LIMIT 5",
      [user],
    );
    expect(plain).toBeGreaterThan(100);
  });

  it("the measurement sees the work inside a function", async () => {
    // The whole 5,000-task session through the same function: far more than one page.
    expect(await buffers(client, "SELECT id FROM session_tasks_oldest($1::uuid, NULL, 0)", [session])).toBeGreaterThan(
      100,
    );
  });

  it.each([
    ["sessions_page", "SELECT id FROM sessions_page($1::uuid, 20, 0)", () => [user]],
    ["tasks_page", "SELECT id FROM tasks_page($1::uuid, NULL, 5, 0)", () => [user]],
    ["tasks_page by status", "SELECT id FROM tasks_page($1::uuid, 'COMPLETED', 5, 0)", () => [user]],
    ["session_tasks_newest", "SELECT id FROM session_tasks_newest($1::uuid, NULL, 5, 0)", () => [session]],
    ["session_tasks_oldest", "SELECT id FROM session_tasks_oldest($1::uuid, 10, 0)", () => [session]],
    [
      "session_window (tail and head)",
      "SELECT id FROM session_window($1::uuid, now(), gen_random_uuid(), 25, 3)",
      () => [session],
    ],
  ])("%s reads a page, not the history", async (_name, sql, params) => {
    expect(await buffers(client, sql, params())).toBeLessThan(60);
  });

  it("pages come in the order the lists promise", async () => {
    const ids = async (sql: string, p: unknown[]) => (await client.query<{ id: string }>(sql, p)).rows.map((r) => r.id);
    const newest = await ids(
      "SELECT id::text FROM tasks WHERE user_id = $1 ORDER BY created_at DESC, id DESC LIMIT 7",
      [user],
    );
    expect(await ids("SELECT id::text FROM tasks_page($1::uuid, NULL, 7, 0)", [user])).toEqual(newest);
    const oldest = await ids(
      "SELECT id::text FROM tasks WHERE session_id = $1 ORDER BY created_at, id LIMIT 5 OFFSET 3",
      [session],
    );
    expect(await ids("SELECT id::text FROM session_tasks_oldest($1::uuid, 5, 3)", [session])).toEqual(oldest);
    // Session memory: the newest 25 (newest first), then the oldest 3, in one statement ...
    const window = (
      await client.query<{ id: string; recent: boolean }>(
        "SELECT id::text, recent FROM session_window($1::uuid, now(), gen_random_uuid(), 25, 3)",
        [session],
      )
    ).rows;
    expect(window.filter((r) => r.recent).map((r) => r.id)).toEqual(
      await ids("SELECT id::text FROM tasks WHERE session_id = $1 ORDER BY created_at DESC, id DESC LIMIT 25", [
        session,
      ]),
    );
    expect(window.filter((r) => !r.recent).map((r) => r.id)).toEqual(
      await ids("SELECT id::text FROM tasks WHERE session_id = $1 ORDER BY created_at, id LIMIT 3", [session]),
    );
    // ... and no head when the tail is not full (the session is within the window).
    const short = (
      await client.query<{ id: string }>(
        "SELECT session_id AS id FROM tasks WHERE user_id = $1 AND session_id <> $2 LIMIT 1",
        [user, session],
      )
    ).rows[0]!.id;
    const shortWindow = (
      await client.query<{ recent: boolean }>(
        "SELECT recent FROM session_window($1::uuid, now(), gen_random_uuid(), 25, 3)",
        [short],
      )
    ).rows;
    expect(shortWindow.length).toBeGreaterThan(0);
    expect(shortWindow.every((r) => r.recent)).toBe(true);
    const all = await ids("SELECT id::text FROM tasks WHERE session_id = $1", [session]);
    expect(await ids("SELECT id::text FROM session_tasks_oldest($1::uuid, NULL, 0)", [session])).toHaveLength(
      all.length,
    );
  });
});

// The bench's shape (2026-11-29): one user with a large history, analyzed, and a user with
// fewer sessions than an incremental sort gathers (32) before it returns a row. ANALYZE's sample
// then sees two users, and the time-only index (sessions_last_activity_at_idx) plus an
// incremental sort on the id looked cheapest: it read the whole index for the small user.
describe("a user with less than a page beside one large analyzed history", () => {
  let db: TestDatabase;
  let client: pg.Client;
  // The small user's id sorts after the large one's, as for half of all pairs: with the other
  // order the (user_id, …) index looked cheaper and the plan was right by luck.
  const small = "ffffffff-ffff-4fff-bfff-ffffffffffff";
  let smallSession: string;

  beforeAll(async () => {
    ({ db, client } = await openDatabase());
    const large = "00000000-0000-4000-8000-000000000001";
    for (const id of [large, small]) await client.query("INSERT INTO users (id, name) VALUES ($1, 'u')", [id]);
    // The small user's sessions are the newest; the large history is stored oldest first (time
    // and storage order agree, as for sessions created over time).
    await client.query(
      `INSERT INTO sessions (id, user_id, token_budget, last_activity_at)
       SELECT gen_random_uuid(), $1, 1000, now() - make_interval(secs => g) FROM generate_series(1, 20) g`,
      [small],
    );
    await client.query(
      `INSERT INTO sessions (id, user_id, token_budget, last_activity_at)
       SELECT gen_random_uuid(), $1, 1000, now() - make_interval(secs => 3600 + $2 - g) FROM generate_series(1, $2::int) g`,
      [large, ROWS],
    );
    smallSession = (await client.query<{ id: string }>("SELECT id FROM sessions WHERE user_id = $1 LIMIT 1", [small]))
      .rows[0]!.id;
    await client.query(
      `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id, result, created_at)
       SELECT gen_random_uuid(), s.user_id, s.id, 'q', 'COMPLETED', '{}', repeat('0', 32), 'r', s.last_activity_at FROM sessions s`,
    );
    await client.query("ANALYZE");
  }, 120_000);

  afterAll(() => closeDatabase(db, client));

  it("the plain query, planned as a function plans it (generic, sorts off), reads the whole index here", async () => {
    await client.query("BEGIN");
    try {
      for (const setting of ["enable_sort", "enable_bitmapscan", "enable_seqscan"])
        await client.query(`SET LOCAL ${setting} = off`);
      await client.query("SET LOCAL plan_cache_mode = force_generic_plan");
      await client.query(
        "PREPARE plain(uuid) AS SELECT id FROM sessions WHERE user_id = $1 AND deleted_at IS NULL ORDER BY last_activity_at DESC, id DESC LIMIT 20",
      );
      expect(await buffers(client, `EXECUTE plain('${small}')`, [])).toBeGreaterThan(100);
    } finally {
      await client.query("ROLLBACK");
      await client.query("DEALLOCATE ALL");
    }
  });

  it.each([
    ["sessions_page", "SELECT id FROM sessions_page($1::uuid, 20, 0)", () => [small]],
    ["tasks_page", "SELECT id FROM tasks_page($1::uuid, NULL, 20, 0)", () => [small]],
    ["session_tasks_newest", "SELECT id FROM session_tasks_newest($1::uuid, NULL, 5, 0)", () => [smallSession]],
    ["session_tasks_oldest", "SELECT id FROM session_tasks_oldest($1::uuid, 10, 0)", () => [smallSession]],
    [
      "session_window",
      "SELECT id FROM session_window($1::uuid, now(), gen_random_uuid(), 25, 3)",
      () => [smallSession],
    ],
  ])("%s reads a page, not the other user's history", async (_name, sql, params) => {
    expect(await buffers(client, sql, params())).toBeLessThan(60);
  });
});
