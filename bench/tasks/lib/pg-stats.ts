import pg from "pg";

// PostgreSQL's own counters, read from a connection to another database (the admin URL's), so
// reading them adds nothing to the measured database. PostgreSQL 15 flushes a backend's counters
// at most once a second and an idle backend's only after ~10 s: read them after a quiet period
// (BENCH_QUIET_MS) or they miss the last requests.

export interface DbCounters {
  commits: number;
  /** tup_returned + tup_fetched: rows read by scans and index fetches, the catalogs' included. */
  tuples: number;
  /**
   * The same, counted on the project's own tables and their indexes only (what `tuples` sums
   * over them): without the catalog reads of a backend that (re)connects or reloads its caches,
   * which depend on pool timing, not on the request. Only when opened with the database's URL.
   */
  ownTuples: number;
}

/** pg_stat_wal: the whole instance's WAL, every database's (meaningful on the bench's own instance). */
export interface WalCounters {
  records: number;
  /** Full-page images: a page's first change after a checkpoint writes the whole page. */
  fpi: number;
  bytes: number;
  /** WAL fsyncs (wal_sync): a synchronous commit waits for one, or for another backend's covering it. */
  syncs: number;
}

/** `b - a`, counter by counter. */
export function minus<T extends Record<string, number>>(b: T, a: T): T {
  const out = { ...b };
  for (const k in out) out[k] = ((b[k] ?? 0) - (a[k] ?? 0)) as T[typeof k];
  return out;
}

export type StatementCounters = Map<
  string,
  { calls: number; rows: number; blocks: number; plans: number; planMs: number; execMs: number }
>;

/** The statements that ran between `a` and `b`, most calls (or most time) first, per `n` units of work. */
export function diffStatements(
  a: StatementCounters,
  b: StatementCounters,
  n: number,
  top = 30,
  by: "calls" | "time" = "calls",
): string[] {
  const zero = { calls: 0, rows: 0, blocks: 0, plans: 0, planMs: 0, execMs: 0 };
  const out: ({ q: string } & typeof zero)[] = [];
  for (const [q, v] of b) {
    const was = a.get(q) ?? zero;
    if (v.calls > was.calls) out.push({ q, ...minus(v, was) });
  }
  if (by === "time") out.sort((x, y) => y.planMs + y.execMs - (x.planMs + x.execMs));
  else out.sort((x, y) => y.calls - x.calls || y.blocks - x.blocks);
  return out
    .slice(0, top)
    .map(
      (s) =>
        `${(s.calls / n).toFixed(2)} calls, ${(s.rows / n).toFixed(1)} rows, ${(s.blocks / n).toFixed(1)} blocks, ${(s.plans / n).toFixed(2)} plans ${((s.planMs * 1000) / n).toFixed(0)} µs, exec ${((s.execMs * 1000) / n).toFixed(0)} µs: ${s.q.replace(/\s+/g, " ").slice(0, 160)}`,
    );
}

export interface TableCounters {
  [table: string]: { ins: number; upd: number; hot: number; del: number; seqRead: number; idxFetch: number };
}

/** A client whose connection errors are ignored: a counter read that fails shows as NaN. */
async function connect(url: string): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: url });
  c.on("error", () => undefined);
  await c.connect();
  return c;
}

export class PgStats {
  private readonly admin: pg.Client;
  private readonly dbName: string;
  private readonly own: pg.Client | undefined;

  private constructor(admin: pg.Client, dbName: string, own: pg.Client | undefined) {
    this.admin = admin;
    this.dbName = dbName;
    this.own = own;
  }

  /**
   * `databaseUrl`: the measured database, for `ownTuples` (its per-table views exist only there;
   * reading them touches catalogs alone, so it adds nothing to what they count).
   */
  static async open(adminUrl: string, dbName: string, databaseUrl?: string): Promise<PgStats> {
    return new PgStats(await connect(adminUrl), dbName, databaseUrl ? await connect(databaseUrl) : undefined);
  }

  async db(): Promise<DbCounters> {
    // A fresh snapshot: inside a transaction PostgreSQL would return the cached one.
    await this.admin.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await this.admin.query<{ c: string; t: string }>(
      "SELECT xact_commit AS c, tup_returned + tup_fetched AS t FROM pg_stat_database WHERE datname = $1",
      [this.dbName],
    );
    return {
      commits: Number(rows[0]?.c ?? NaN),
      tuples: Number(rows[0]?.t ?? NaN),
      ownTuples: this.own ? await ownTuples(this.own) : NaN,
    };
  }

  async wal(): Promise<WalCounters> {
    await this.admin.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await this.admin.query<{ r: string; f: string; b: string; s: string }>(
      "SELECT wal_records AS r, wal_fpi AS f, wal_bytes AS b, wal_sync AS s FROM pg_stat_wal",
    );
    const r = rows[0];
    return {
      records: Number(r?.r ?? NaN),
      fpi: Number(r?.f ?? NaN),
      bytes: Number(r?.b ?? NaN),
      syncs: Number(r?.s ?? NaN),
    };
  }

  /**
   * Per-statement counters of the measured database (pg_stat_statements, loaded only with
   * BENCH_PG_STATEMENTS): for finding which statements a difference between two windows is made of.
   */
  async statements(): Promise<StatementCounters> {
    await this.admin.query("CREATE EXTENSION IF NOT EXISTS pg_stat_statements");
    const { rows } = await this.admin.query<{
      q: string;
      calls: string;
      rows: string;
      blks: string;
      plans: string;
      plan_ms: number;
      exec_ms: number;
    }>(
      `SELECT query AS q, sum(calls) AS calls, sum(rows) AS rows, sum(shared_blks_hit + shared_blks_read) AS blks,
              sum(plans) AS plans, sum(total_plan_time) AS plan_ms, sum(total_exec_time) AS exec_ms
         FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database WHERE datname = $1) GROUP BY query`,
      [this.dbName],
    );
    const out: StatementCounters = new Map();
    for (const r of rows)
      out.set(r.q, {
        calls: Number(r.calls),
        rows: Number(r.rows),
        blocks: Number(r.blks),
        plans: Number(r.plans),
        planMs: Number(r.plan_ms),
        execMs: Number(r.exec_ms),
      });
    return out;
  }

  async settings(): Promise<{ version: string; autovacuum: string }> {
    const { rows } = await this.admin.query<{ v: string; a: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('autovacuum') AS a",
    );
    return { version: rows[0]!.v, autovacuum: rows[0]!.a };
  }

  async close(): Promise<void> {
    await this.admin.end().catch(() => undefined);
    await this.own?.end().catch(() => undefined);
  }
}

/** Per-table row counters of the measured database (costs one catalog query in it). */
export async function tableCounters(databaseUrl: string): Promise<TableCounters> {
  const c = await connect(databaseUrl);
  try {
    const { rows } = await c.query<{
      relname: string;
      ins: string;
      upd: string;
      hot: string;
      del: string;
      seq: string | null;
      idx: string | null;
    }>(
      `SELECT relname, n_tup_ins AS ins, n_tup_upd AS upd, n_tup_hot_upd AS hot, n_tup_del AS del,
              seq_tup_read AS seq, idx_tup_fetch AS idx FROM pg_stat_user_tables`,
    );
    const out: TableCounters = {};
    for (const r of rows)
      out[r.relname] = {
        ins: Number(r.ins),
        upd: Number(r.upd),
        hot: Number(r.hot),
        del: Number(r.del),
        seqRead: Number(r.seq ?? 0),
        idxFetch: Number(r.idx ?? 0),
      };
    return out;
  } finally {
    await c.end();
  }
}

export const diffWal = (a: WalCounters, b: WalCounters): WalCounters => ({
  records: b.records - a.records,
  fpi: b.fpi - a.fpi,
  bytes: b.bytes - a.bytes,
  syncs: b.syncs - a.syncs,
});

export const diffDb = (a: DbCounters, b: DbCounters): DbCounters => ({
  commits: b.commits - a.commits,
  tuples: b.tuples - a.tuples,
  ownTuples: b.ownTuples - a.ownTuples,
});

/**
 * pg_stat_database's tup_returned + tup_fetched restricted to the project's relations: rows
 * returned by sequential scans and by index scans (an index's idx_tup_read) plus heap rows
 * fetched through an index (a table's idx_tup_fetch sums its indexes'), over every table outside
 * the system schemas and its TOAST table (a large JSON value read is work a request does).
 */
const OWN_TUPLES_SQL = `
  WITH own AS (
    SELECT c.oid, c.reltoastrelid FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE c.relkind IN ('r', 'p', 'm') AND n.nspname NOT IN ('pg_catalog', 'information_schema', 'pg_toast')
  ), rels AS (
    SELECT oid FROM own UNION ALL SELECT reltoastrelid FROM own WHERE reltoastrelid <> 0
  )
  SELECT (SELECT coalesce(sum(seq_tup_read + coalesce(idx_tup_fetch, 0)), 0) FROM pg_stat_all_tables
           WHERE relid IN (SELECT oid FROM rels))
       + (SELECT coalesce(sum(idx_tup_read), 0) FROM pg_stat_all_indexes WHERE relid IN (SELECT oid FROM rels)) AS t`;

async function ownTuples(c: pg.Client): Promise<number> {
  await c.query("SELECT pg_stat_clear_snapshot()");
  const { rows } = await c.query<{ t: string | null }>(OWN_TUPLES_SQL);
  return Number(rows[0]?.t ?? NaN);
}
