import pg from "pg";

// Churn for the bench (issue 10, target 3: "after 100,000 tasks of churn with no vacuum in
// between"): the row life cycle of real tasks, written through SQL in the shape the services
// write it — per batch, one transaction inserting sessions and QUEUED tasks, one claiming them
// (RUNNING, lease), one setting the mode, one finishing them (COMPLETED, result, usage) with the
// session totals — so every status change and counter trigger fires as in production, and the
// updates are HOT or not exactly as the services' are. Autovacuum is switched off for the
// tables the task path writes until `restore()`, so nothing is vacuumed in between.

export const CHURNED_TABLES = ["tasks", "sessions", "user_counters", "task_steps", "task_events"] as const;

export interface ChurnResult {
  tasks: number;
  ms: number;
  /** pg_stat_user_tables after the churn (PG 15 reports these up to 10 s late: read after a quiet wait). */
  tables?: Record<string, { live: number; dead: number; hotShare: number }>;
}

export async function churn(options: {
  databaseUrl: string;
  userId: string;
  tasks: number;
  batch?: number;
}): Promise<ChurnResult> {
  const db = new pg.Client({ connectionString: options.databaseUrl });
  db.on("error", () => undefined);
  await db.connect();
  const started = performance.now();
  try {
    for (const t of CHURNED_TABLES)
      await db.query(`ALTER TABLE ${t} SET (autovacuum_enabled = false, toast.autovacuum_enabled = false)`);
    const batch = options.batch ?? 100;
    // One DO block per batch keeps each step its own transaction (as the services commit them)
    // while the whole churn costs a few hundred round trips.
    for (let done = 0; done < options.tasks; done += batch) {
      const n = Math.min(batch, options.tasks - done);
      await db.query(`
        DO $$
        DECLARE ids uuid[]; sids uuid[];
        BEGIN
          SELECT array_agg(gen_random_uuid()), array_agg(gen_random_uuid()) INTO ids, sids FROM generate_series(1, ${n});
          INSERT INTO sessions (id, user_id, token_budget, task_count)
            SELECT s, ${pg.escapeLiteral(options.userId)}::uuid, 1000000, 1 FROM unnest(sids) s;
          INSERT INTO tasks (id, user_id, session_id, query, requested_mode, status, spec, trace_id)
            SELECT i, ${pg.escapeLiteral(options.userId)}::uuid, s, 'Say hello', 'simple', 'QUEUED', '{}'::jsonb, repeat('0', 32)
            FROM unnest(ids, sids) AS x(i, s);
          COMMIT;
          UPDATE tasks SET status = 'RUNNING', attempts = attempts + 1, lease_owner = 'churn', lease_expires_at = now() + interval '30 s',
                 started_at = now(), updated_at = now() WHERE id = ANY(ids) AND status = 'QUEUED';
          COMMIT;
          UPDATE tasks SET mode = 'EXECUTION_MODE_SIMPLE', lease_expires_at = now() + interval '30 s' WHERE id = ANY(ids);
          COMMIT;
          UPDATE tasks SET status = 'COMPLETED', result = 'Hello!', model_used = 'offline', provider = 'offline', input_tokens = 10,
                 output_tokens = 5, total_tokens = 15, cost_usd = 0, completed_at = now(), updated_at = now(), lease_owner = NULL,
                 lease_expires_at = NULL WHERE id = ANY(ids) AND status = 'RUNNING';
          UPDATE sessions SET tokens_used = tokens_used + 15, updated_at = now() WHERE id = ANY(sids);
          COMMIT;
        END $$`);
    }
    return { tasks: options.tasks, ms: performance.now() - started };
  } finally {
    await db.end();
  }
}

/** Table statistics after the churn (call after PG 15's statistics delay). */
export async function churnedTables(databaseUrl: string): Promise<NonNullable<ChurnResult["tables"]>> {
  const db = new pg.Client({ connectionString: databaseUrl });
  db.on("error", () => undefined);
  await db.connect();
  try {
    const { rows } = await db.query<{ relname: string; live: string; dead: string; upd: string; hot: string }>(
      `SELECT relname, n_live_tup AS live, n_dead_tup AS dead, n_tup_upd AS upd, n_tup_hot_upd AS hot
         FROM pg_stat_user_tables WHERE relname = ANY($1)`,
      [[...CHURNED_TABLES]],
    );
    return Object.fromEntries(
      rows.map((r) => [
        r.relname,
        { live: Number(r.live), dead: Number(r.dead), hotShare: Number(r.upd) > 0 ? Number(r.hot) / Number(r.upd) : 1 },
      ]),
    );
  } finally {
    await db.end();
  }
}

/** Gives the tables back to autovacuum. */
export async function restoreAutovacuum(databaseUrl: string): Promise<void> {
  const db = new pg.Client({ connectionString: databaseUrl });
  db.on("error", () => undefined);
  await db.connect();
  try {
    for (const t of CHURNED_TABLES)
      await db.query(`ALTER TABLE ${t} RESET (autovacuum_enabled, toast.autovacuum_enabled)`);
  } finally {
    await db.end();
  }
}
