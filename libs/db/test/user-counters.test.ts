import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";

// The per-user counters behind total_count (migration 20261124000000_hot_paths) must equal a
// full count whatever writes the rows: inserts, status changes from many connections at once,
// soft deletes, hard deletes cascading from sessions, and rows that existed before the migration.

const STATUSES = ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"] as const;

describe("user_counters", () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 8 });
    // Dropping the database ends idle connections from the server side: not a test failure.
    pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function newUser(): Promise<string> {
    const id = randomUUID();
    await pool.query("INSERT INTO users (id, name) VALUES ($1, $2)", [id, `u-${id}`]);
    return id;
  }

  async function newSession(userId: string): Promise<string> {
    const id = randomUUID();
    await pool.query("INSERT INTO sessions (id, user_id, token_budget) VALUES ($1, $2, 1000)", [id, userId]);
    return id;
  }

  async function newTask(userId: string, sessionId: string, status: string): Promise<string> {
    const id = randomUUID();
    await pool.query(
      `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id) VALUES ($1, $2, $3, 'q', $4, '{}', $5)`,
      [id, userId, sessionId, status, "0".repeat(32)],
    );
    return id;
  }

  /** Counter sums and real counts for a user, per status, plus active sessions. */
  async function compare(userId: string) {
    const counters = await pool.query(
      `SELECT coalesce(sum(tasks_queued), 0)::int AS "QUEUED", coalesce(sum(tasks_running), 0)::int AS "RUNNING",
              coalesce(sum(tasks_completed), 0)::int AS "COMPLETED", coalesce(sum(tasks_failed), 0)::int AS "FAILED",
              coalesce(sum(tasks_cancelled), 0)::int AS "CANCELLED", coalesce(sum(tasks_timeout), 0)::int AS "TIMEOUT",
              coalesce(sum(sessions_active), 0)::int AS sessions
       FROM user_counters WHERE user_id = $1`,
      [userId],
    );
    const real: Record<string, number> = {};
    for (const s of STATUSES) {
      real[s] = (
        await pool.query("SELECT count(*)::int AS n FROM tasks WHERE user_id = $1 AND status = $2", [userId, s])
      ).rows[0].n;
    }
    real.sessions = (
      await pool.query("SELECT count(*)::int AS n FROM sessions WHERE user_id = $1 AND deleted_at IS NULL", [userId])
    ).rows[0].n;
    return { counters: counters.rows[0], real };
  }

  it("follow inserts, concurrent status changes, soft and hard deletes", async () => {
    const alice = await newUser();
    const bob = await newUser();
    const sessions = await Promise.all([alice, alice, alice, bob].map((u) => newSession(u)));
    const tasks: { id: string; user: string }[] = [];
    for (let i = 0; i < 40; i++) {
      const s = i % 4;
      const user = s === 3 ? bob : alice;
      tasks.push({ id: await newTask(user, sessions[s]!, "QUEUED"), user });
    }
    let c = await compare(alice);
    expect(c.counters).toEqual(c.real);
    expect(c.real.QUEUED).toBe(30);

    // Claims and finishes from 8 connections at once, as workers do.
    await Promise.all(tasks.map((t) => pool.query("UPDATE tasks SET status = 'RUNNING' WHERE id = $1", [t.id])));
    await Promise.all(
      tasks.map((t, i) =>
        pool.query("UPDATE tasks SET status = $2, updated_at = now() WHERE id = $1", [t.id, STATUSES[2 + (i % 4)]]),
      ),
    );
    // An update that does not change the status leaves the counts alone.
    await pool.query("UPDATE tasks SET status = status, mode = 'EXECUTION_MODE_SIMPLE' WHERE user_id = $1", [alice]);
    c = await compare(alice);
    expect(c.counters).toEqual(c.real);
    expect(c.real.RUNNING).toBe(0);
    expect(c.real.COMPLETED! + c.real.FAILED! + c.real.CANCELLED! + c.real.TIMEOUT!).toBe(30);

    // Soft delete (twice: the second changes nothing), then a purge deleting a session with its tasks.
    await pool.query("UPDATE sessions SET deleted_at = now() WHERE id = $1", [sessions[0]]);
    await pool.query("UPDATE sessions SET deleted_at = now() WHERE id = $1", [sessions[0]]);
    await pool.query("DELETE FROM sessions WHERE id = $1", [sessions[1]]);
    c = await compare(alice);
    expect(c.counters).toEqual(c.real);
    expect(c.real.sessions).toBe(1);
    const b = await compare(bob);
    expect(b.counters).toEqual(b.real);
    expect(b.real.sessions).toBe(1);
  });

  it("a rolled-back transaction leaves no count behind", async () => {
    const carol = await newUser();
    const session = await newSession(carol);
    const client = await pool.connect();
    try {
      await client.query("BEGIN");
      await client.query(
        `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id) VALUES ($1, $2, $3, 'q', 'QUEUED', '{}', $4)`,
        [randomUUID(), carol, session, "0".repeat(32)],
      );
      await client.query("ROLLBACK");
    } finally {
      client.release();
    }
    const c = await compare(carol);
    expect(c.counters).toEqual(c.real);
    expect(c.real.QUEUED).toBe(0);
  });
});
