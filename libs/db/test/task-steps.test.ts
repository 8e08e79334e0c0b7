import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import pg from "pg";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";

// task_steps has no foreign key to tasks (migration 20261125110000_task_steps_no_fk): writing a
// step takes no lock on its task row, and a task's steps still go when the task goes.

describe("task_steps", () => {
  let db: TestDatabase;
  let pool: pg.Pool;
  beforeAll(async () => {
    db = await createTestDatabase();
    pool = new pg.Pool({ connectionString: db.url, max: 4 });
    pool.on("error", () => undefined);
  });
  afterAll(async () => {
    await pool?.end();
    await db?.drop();
  });

  async function newTask(): Promise<{ sessionId: string; taskId: string }> {
    const userId = randomUUID();
    const sessionId = randomUUID();
    const taskId = randomUUID();
    await pool.query("INSERT INTO users (id, name) VALUES ($1, $2)", [userId, `u-${userId}`]);
    await pool.query("INSERT INTO sessions (id, user_id, token_budget) VALUES ($1, $2, 1000)", [sessionId, userId]);
    await pool.query(
      `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id) VALUES ($1, $2, $3, 'q', 'RUNNING', '{}', $4)`,
      [taskId, userId, sessionId, "0".repeat(32)],
    );
    return { sessionId, taskId };
  }

  const insertStep = (client: pg.PoolClient | pg.Pool, taskId: string, key: string) =>
    client.query(
      `INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, started_at) VALUES ($1, $2, 'llm', 'm', 'a', 'completed', now())`,
      [taskId, key],
    );

  it("are written without locking their task row", async () => {
    const { taskId } = await newTask();
    const writer = await pool.connect();
    const other = await pool.connect();
    try {
      await writer.query("BEGIN");
      await insertStep(writer, taskId, "llm:0");
      // A foreign key's check would hold FOR KEY SHARE on the task row until the commit.
      await other.query("BEGIN");
      await expect(other.query("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE NOWAIT", [taskId])).resolves.toMatchObject(
        { rowCount: 1 },
      );
      await other.query("ROLLBACK");
      await writer.query("COMMIT");
    } finally {
      await other.query("ROLLBACK").catch(() => undefined);
      await writer.query("ROLLBACK").catch(() => undefined);
      writer.release();
      other.release();
    }
  });

  it("go with their task, also when it goes with its session", async () => {
    const a = await newTask();
    const b = await newTask();
    const kept = await newTask();
    for (const t of [a, b, kept]) for (const key of ["start", "llm:0"]) await insertStep(pool, t.taskId, key);
    await pool.query("DELETE FROM tasks WHERE id = $1", [a.taskId]);
    await pool.query("DELETE FROM sessions WHERE id = $1", [b.sessionId]);
    const left = await pool.query<{ task_id: string; n: number }>(
      "SELECT task_id::text, count(*)::int AS n FROM task_steps WHERE task_id = ANY($1::uuid[]) GROUP BY 1",
      [[a.taskId, b.taskId, kept.taskId]],
    );
    expect(left.rows).toEqual([{ task_id: kept.taskId, n: 2 }]);
  });
});
