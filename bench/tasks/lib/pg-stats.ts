import pg from "pg";

// PostgreSQL's own counters, read from a connection to another database (the admin URL's), so
// reading them adds nothing to the measured database. PostgreSQL 15 flushes a backend's counters
// at most once a second and an idle backend's only after ~10 s: read them after a quiet period
// (BENCH_QUIET_MS) or they miss the last requests.

export interface DbCounters {
  commits: number;
  /** tup_returned + tup_fetched: rows read by scans and index fetches. */
  tuples: number;
}

export interface TableCounters {
  [table: string]: { ins: number; upd: number; hot: number; del: number; seqRead: number; idxFetch: number };
}

export class PgStats {
  private readonly admin: pg.Client;
  private readonly dbName: string;

  private constructor(admin: pg.Client, dbName: string) {
    this.admin = admin;
    this.dbName = dbName;
  }

  static async open(adminUrl: string, dbName: string): Promise<PgStats> {
    const admin = new pg.Client({ connectionString: adminUrl });
    admin.on("error", () => undefined);
    await admin.connect();
    return new PgStats(admin, dbName);
  }

  async db(): Promise<DbCounters> {
    // A fresh snapshot: inside a transaction PostgreSQL would return the cached one.
    await this.admin.query("SELECT pg_stat_clear_snapshot()");
    const { rows } = await this.admin.query<{ c: string; t: string }>(
      "SELECT xact_commit AS c, tup_returned + tup_fetched AS t FROM pg_stat_database WHERE datname = $1",
      [this.dbName],
    );
    return { commits: Number(rows[0]?.c ?? NaN), tuples: Number(rows[0]?.t ?? NaN) };
  }

  async settings(): Promise<{ version: string; autovacuum: string }> {
    const { rows } = await this.admin.query<{ v: string; a: string }>(
      "SELECT current_setting('server_version') AS v, current_setting('autovacuum') AS a",
    );
    return { version: rows[0]!.v, autovacuum: rows[0]!.a };
  }

  async close(): Promise<void> {
    await this.admin.end().catch(() => undefined);
  }
}

/** Per-table row counters of the measured database (costs one catalog query in it). */
export async function tableCounters(databaseUrl: string): Promise<TableCounters> {
  const c = new pg.Client({ connectionString: databaseUrl });
  c.on("error", () => undefined);
  await c.connect();
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

export const diffDb = (a: DbCounters, b: DbCounters): DbCounters => ({
  commits: b.commits - a.commits,
  tuples: b.tuples - a.tuples,
});
