import { describe, expect, it } from "vitest";
import { testDatabaseClient } from "./test-client.ts";

// Storage settings the task path relies on, which only migrations say (schema.prisma has no word
// for them): docs/performance.md "Rules the hot paths follow" and "Analyze of the payload columns".

const db = testDatabaseClient();

async function tableOptions(table: string): Promise<string[]> {
  const { rows } = await db.client.query<{ reloptions: string[] | null }>(
    "SELECT reloptions FROM pg_class WHERE oid = $1::regclass",
    [table],
  );
  return rows[0]?.reloptions ?? [];
}

/** Each column's statistics target; -1 is the server's default. */
async function statisticsTargets(table: string): Promise<Record<string, number>> {
  const { rows } = await db.client.query<{ attname: string; target: number }>(
    `SELECT attname, coalesce(attstattarget, -1)::int AS target FROM pg_attribute
      WHERE attrelid = $1::regclass AND attnum > 0 AND NOT attisdropped`,
    [table],
  );
  return Object.fromEntries(rows.map((r) => [r.attname, r.target]));
}

describe("storage settings of the task path's tables", () => {
  it("tasks, sessions and user_counters leave room on each page for HOT updates", async () => {
    expect(await tableOptions("tasks")).toContain("fillfactor=70");
    expect(await tableOptions("sessions")).toContain("fillfactor=80");
    expect(await tableOptions("user_counters")).toContain("fillfactor=50");
  });

  it("ANALYZE skips the payload columns and keeps the keys' statistics", async () => {
    const steps = await statisticsTargets("task_steps");
    expect({ output: steps.output, events: steps.events }).toEqual({ output: 0, events: 0 });
    expect(steps.task_id).toBe(-1);
    const tasks = await statisticsTargets("tasks");
    expect({ query: tasks.query, spec: tasks.spec, result: tasks.result }).toEqual({ query: 0, spec: 0, result: 0 });
    expect([tasks.user_id, tasks.session_id, tasks.created_at, tasks.status]).toEqual([-1, -1, -1, -1]);
    // what ANALYZE then stores: nothing for a payload column, a histogram for a key
    await db.client.query(
      `INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, output, events, started_at)
       SELECT gen_random_uuid(), 'llm', 'llm', 'llm', 'agent', 'completed', jsonb_build_object('text', md5(i::text)),
              json_build_array(i), now() FROM generate_series(1, 200) AS i`,
    );
    await db.client.query("ANALYZE task_steps");
    const { rows } = await db.client.query<{ attname: string }>(
      "SELECT attname FROM pg_stats WHERE schemaname = 'public' AND tablename = 'task_steps'",
    );
    const analyzed = rows.map((r) => r.attname);
    expect(analyzed).toContain("task_id");
    expect(analyzed).not.toContain("output");
    expect(analyzed).not.toContain("events");
  });
});
