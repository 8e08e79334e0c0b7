import { existsSync, readFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";

// History for the bench, written in bulk through SQL (INSERT … SELECT generate_series), not
// through the API. Every row is a copy of a real template row (a simple task the system ran for
// the seeded user): the column list is read from information_schema, so columns added later are
// copied from the template or, when they have a sequence/identity default, left to that
// default. Ids are replaced, json columns get the template's ids rewritten, timestamps are
// moved into the past (10 s apart). Like any bulk load it runs with triggers off
// (session_replication_role = replica: no NOTIFY flood, no FK checks); the 1,000-turn session's
// counters are re-derived here, and anything else the schema keeps per user or session (by
// trigger or by application code) by bench/tasks/seed-fixups.sql (optional, run last in the same
// transaction; `current_setting('bench.seed_user_id')` names the seeded user).

export const FIXUPS_FILE = fileURLToPath(new URL("../seed-fixups.sql", import.meta.url));

interface Column {
  name: string;
  type: string;
  hasSequence: boolean;
}

async function columnsOf(db: pg.Client, table: string): Promise<Column[]> {
  const { rows } = await db.query<{
    column_name: string;
    data_type: string;
    column_default: string | null;
    is_identity: string;
    is_generated: string;
  }>(
    `SELECT column_name, data_type, column_default, is_identity, is_generated
       FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1 ORDER BY ordinal_position`,
    [table],
  );
  if (rows.length === 0) throw new Error(`seed: table ${table} not found`);
  return rows
    .filter((r) => r.is_generated !== "ALWAYS")
    .map((r) => ({
      name: r.column_name,
      type: r.data_type,
      hasSequence: r.is_identity === "YES" || (r.column_default ?? "").startsWith("nextval("),
    }));
}

const q = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * `INSERT INTO table SELECT … FROM table t, generate_series(1, count) g WHERE t.<key> = template`:
 * `overrides` maps a column to an SQL expression (of `t` and `g`); json columns get each
 * `[from, to]` of `rewrite` replaced; timestamps move back by `shift` (an interval expression).
 */
async function cloneRows(
  db: pg.Client,
  options: {
    table: string;
    where: string;
    count: number;
    overrides: Record<string, string>;
    rewrite: [string, string][];
    shift: string;
  },
): Promise<number> {
  const cols = (await columnsOf(db, options.table)).filter((c) => !c.hasSequence || c.name in options.overrides);
  const exprs = cols.map((c) => {
    if (c.name in options.overrides) return options.overrides[c.name]!;
    const col = `t.${q(c.name)}`;
    if (c.type === "json" || c.type === "jsonb") {
      let text = `${col}::text`;
      for (const [from, to] of options.rewrite) text = `replace(${text}, ${from}, ${to})`;
      return `(${text})::${c.type}`;
    }
    if (c.type.startsWith("timestamp")) return `${col} - ${options.shift}`;
    return col;
  });
  const sql = `INSERT INTO ${q(options.table)} (${cols.map((c) => q(c.name)).join(", ")})
    SELECT ${exprs.join(", ")} FROM ${q(options.table)} t CROSS JOIN generate_series(1, ${options.count}) g WHERE ${options.where}`;
  const result = await db.query(sql);
  return result.rowCount ?? 0;
}

async function tablesWithColumn(db: pg.Client, column: string, except: string[]): Promise<string[]> {
  const { rows } = await db.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c JOIN information_schema.tables t USING (table_schema, table_name)
      WHERE c.table_schema = current_schema() AND c.column_name = $1 AND t.table_type = 'BASE TABLE' ORDER BY 1`,
    [column],
  );
  return rows.map((r) => r.table_name).filter((t) => !except.includes(t));
}

export interface SeedOptions {
  databaseUrl: string;
  /** The seeded user's real task, run by the system (simple, completed), and its session. */
  templateTaskId: string;
  templateSessionId: string;
  userId: string;
  /** Earlier tasks, one session each. */
  sessions: number;
  /** Turns of the one long session (each a task with the template's events and steps). */
  turns: number;
  analyze: boolean;
}

export interface SeedResult {
  bigSessionId: string;
  /** The newest task of the long session. */
  bigSessionLastTaskId: string;
  rows: Record<string, number>;
  fixups: boolean;
  ms: number;
}

export async function seedHistory(o: SeedOptions): Promise<SeedResult> {
  const t0 = performance.now();
  const salt = randomBytes(6).toString("hex");
  const db = new pg.Client({ connectionString: o.databaseUrl });
  db.on("error", () => undefined);
  await db.connect();
  const lit = (s: string) => `'${s.replace(/'/g, "''")}'`;
  const sid = (g: string) => `md5(${lit(`${salt}:s:`)} || ${g})::uuid`;
  const tid = (g: string) => `md5(${lit(`${salt}:t:`)} || ${g})::uuid`;
  const btid = (g: string) => `md5(${lit(`${salt}:bt:`)} || ${g})::uuid`;
  const bigSessionId = (await db.query<{ id: string }>(`SELECT ${sid("'big'")} AS id`)).rows[0]!.id;
  const bigSessionLastTaskId = (await db.query<{ id: string }>(`SELECT ${btid(String(o.turns))} AS id`)).rows[0]!.id;
  const T = lit(o.templateTaskId);
  const S = lit(o.templateSessionId);
  const rows: Record<string, number> = {};
  const add = (k: string, n: number) => (rows[k] = (rows[k] ?? 0) + n);
  try {
    await db.query("BEGIN");
    // A bulk load, not 200,000 single submissions: triggers (NOTIFY per row, …) and foreign-key
    // checks are off for this transaction. Whatever a trigger would have maintained is derived
    // below or by seed-fixups.sql.
    await db.query("SET LOCAL session_replication_role = replica");
    // 1. `sessions` earlier sessions, each holding one task (the template session's counters are a
    //    one-task session's), and the long session.
    const hasExternalId = await hasColumn(db, "sessions", "external_id");
    const sessionOverrides = (id: string): Record<string, string> => ({
      id,
      ...(hasExternalId ? { external_id: "NULL" } : {}),
    });
    add(
      "sessions",
      await cloneRows(db, {
        table: "sessions",
        where: `t.id = ${S}`,
        count: o.sessions,
        overrides: sessionOverrides(sid("g::text")),
        rewrite: [[S, `${sid("g::text")}::text`]],
        shift: `make_interval(secs => (${o.sessions} - g + 1 + ${o.turns}) * 10)`,
      }),
    );
    add(
      "sessions",
      await cloneRows(db, {
        table: "sessions",
        where: `t.id = ${S}`,
        count: 1,
        overrides: sessionOverrides(sid("'big'")),
        rewrite: [[S, `${sid("'big'")}::text`]],
        shift: `make_interval(secs => ${o.turns + 1} * 10)`,
      }),
    );
    // 2. `tasks`: one per earlier session, and the long session's turns.
    add(
      "tasks",
      await cloneRows(db, {
        table: "tasks",
        where: `t.id = ${T}`,
        count: o.sessions,
        overrides: { id: tid("g::text"), session_id: sid("g::text") },
        rewrite: [
          [T, `${tid("g::text")}::text`],
          [S, `${sid("g::text")}::text`],
        ],
        shift: `make_interval(secs => (${o.sessions} - g + 1 + ${o.turns}) * 10)`,
      }),
    );
    add(
      "tasks",
      await cloneRows(db, {
        table: "tasks",
        where: `t.id = ${T}`,
        count: o.turns,
        overrides: { id: btid("g::text"), session_id: sid("'big'") },
        rewrite: [
          [T, `${btid("g::text")}::text`],
          [S, `${sid("'big'")}::text`],
        ],
        shift: `make_interval(secs => (${o.turns} - g + 1) * 10)`,
      }),
    );
    // 3. Per-task rows (events, steps, …) of the template, for every turn of the long session.
    for (const table of await tablesWithColumn(db, "task_id", ["tasks"])) {
      add(
        table,
        await cloneRows(db, {
          table,
          where: `t.task_id = ${T}`,
          count: o.turns,
          overrides: { task_id: btid("g::text") },
          rewrite: [
            [T, `${btid("g::text")}::text`],
            [S, `${sid("'big'")}::text`],
          ],
          shift: `make_interval(secs => (${o.turns} - g + 1) * 10)`,
        }),
      );
    }
    // 4. Counters of the long session, from its tasks (the copies hold one task's counters).
    const counters: string[] = [];
    if (await hasColumn(db, "sessions", "task_count")) counters.push("task_count = x.n");
    if (await hasColumn(db, "sessions", "tokens_used")) counters.push("tokens_used = x.tokens");
    if (await hasColumn(db, "sessions", "total_cost_usd")) counters.push("total_cost_usd = x.cost");
    if (counters.length > 0) {
      await db.query(
        `UPDATE sessions s SET ${counters.join(", ")}
           FROM (SELECT count(*)::int AS n, coalesce(sum(total_tokens), 0)::int AS tokens, coalesce(sum(cost_usd), 0) AS cost
                   FROM tasks WHERE session_id = $1) x
          WHERE s.id = $1`,
        [bigSessionId],
      );
    }
    // 5. The lead's hook for whatever else the schema keeps per user (counter tables, …).
    const fixups = existsSync(FIXUPS_FILE) ? readFileSync(FIXUPS_FILE, "utf8") : "";
    await db.query(
      "SELECT set_config('bench.seed_user_id', $1, true), set_config('bench.seed_big_session_id', $2, true)",
      [o.userId, bigSessionId],
    );
    if (fixups.trim()) await db.query(fixups);
    await db.query("COMMIT");
    if (o.analyze) await db.query("ANALYZE");
    return {
      bigSessionId,
      bigSessionLastTaskId,
      rows,
      fixups: fixups.replace(/--.*$/gm, "").trim().length > 0,
      ms: performance.now() - t0,
    };
  } catch (err) {
    await db.query("ROLLBACK").catch(() => undefined);
    throw new Error(
      `seeding the history failed (schema changed? see bench/tasks/seed-fixups.sql): ${(err as Error).message}`,
      { cause: err },
    );
  } finally {
    await db.end();
  }
}

async function hasColumn(db: pg.Client, table: string, column: string): Promise<boolean> {
  return (await columnsOf(db, table)).some((c) => c.name === column);
}
