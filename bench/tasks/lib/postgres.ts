import { execFile } from "node:child_process";
import { chmodSync, chownSync, existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import pg from "pg";
import { freePort } from "@tog/devstack";

const run = promisify(execFile);

// The bench's own PostgreSQL, configured like production (autovacuum on, fsync on, defaults
// otherwise), so its figures do not depend on the shared development instance (autovacuum off,
// other engineers' load). Started from the distribution's binaries; PostgreSQL refuses to run as
// root, so as root it runs as the `postgres` user (runuser).

export interface PrivatePostgres {
  /** postgresql://postgres@127.0.0.1:<port>/postgres */
  adminUrl: string;
  dataDir: string;
  /** The server's log (removed with the instance on stop). */
  logFile: string;
  /** The postmaster's pid. */
  pid(): Promise<number>;
  /** Makes the WAL segments the next phase will write into; returns how many lie ahead. */
  readyWal(): Promise<number>;
  stop(): Promise<void>;
}

/** WAL segments (16 MB each) switched through before the checkpoint that recycles them. */
const WARM_SEGMENTS = 64;

/**
 * Leaves the instance with its next WAL segments already made, as a server that has run a while
 * has them: a checkpoint recycles the segments it no longer needs into the next ones. A fresh
 * cluster has one, and the backend whose WAL crosses into the next creates it, zero-filled and
 * synced, while every commit waits (docs/performance.md "WAL segments of a fresh instance").
 */
export async function readyWalSegments(adminUrl: string): Promise<number> {
  const client = new pg.Client({ connectionString: adminUrl });
  client.on("error", () => undefined);
  await client.connect();
  try {
    await crossWalSegments(client, WARM_SEGMENTS);
    await client.query("CHECKPOINT");
    const { rows } = await client.query<{ ahead: number }>(
      `SELECT count(*)::int AS ahead FROM pg_ls_waldir()
        WHERE name ~ '^[0-9A-F]{24}$' AND name > pg_walfile_name(pg_current_wal_lsn())`,
    );
    return rows[0]!.ahead;
  } finally {
    await client.end();
  }
}

/** Moves the instance's WAL into `n` further segments. */
export async function crossWalSegments(client: pg.Client, n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    // a switch needs WAL written since the last one: an xid's commit record
    await client.query("SELECT txid_current()");
    await client.query("SELECT pg_switch_wal()");
  }
}

/** The directory of initdb/pg_ctl: BENCH_PG_BIN, else the newest /usr/lib/postgresql/<v>/bin. */
export function postgresBinDir(explicit?: string): string {
  if (explicit) return explicit;
  const root = "/usr/lib/postgresql";
  const versions = existsSync(root)
    ? readdirSync(root)
        .filter((v) => existsSync(path.join(root, v, "bin", "initdb")))
        .sort((a, b) => Number(b) - Number(a))
    : [];
  if (versions.length === 0)
    throw new Error("no PostgreSQL binaries under /usr/lib/postgresql (set BENCH_PG_BIN, or BENCH_PG=machine)");
  return path.join(root, versions[0]!, "bin");
}

export async function startPrivatePostgres(options: {
  binDir: string;
  maxConnections: number;
  /** Load pg_stat_statements (profiling only: BENCH_PG_STATEMENTS). */
  statements?: boolean;
  /**
   * Log every statement that takes this long, and every autovacuum, with epoch timestamps
   * (diagnosis only: BENCH_PAUSES; tail.ts `readPostgresPauses` reads the log).
   */
  slowStatementsMs?: number;
  /** More postgresql.conf lines (`name = value`), after the bench's own, so they override them. */
  settings?: string[];
}): Promise<PrivatePostgres> {
  const isRoot = process.getuid?.() === 0;
  const asUser = async (cmd: string, args: string[]) => {
    const file = path.join(options.binDir, cmd);
    return isRoot ? run("runuser", ["-u", "postgres", "--", file, ...args]) : run(file, args);
  };
  const base = mkdtempSync(path.join(os.tmpdir(), "tog-bench-pg-"));
  const dataDir = path.join(base, "data");
  if (isRoot) {
    const { stdout } = await run("id", ["-u", "postgres"]);
    const { stdout: gid } = await run("id", ["-g", "postgres"]);
    chownSync(base, Number(stdout.trim()), Number(gid.trim()));
  }
  chmodSync(base, 0o700);
  const port = await freePort();
  try {
    await asUser("initdb", [
      "-D",
      dataDir,
      "-U",
      "postgres",
      "--auth=trust",
      "--encoding=UTF8",
      "--locale=C.UTF-8",
      "--no-sync",
    ]);
    // Production-like: autovacuum on (the default, stated so it is visible); everything else
    // stays at the distribution's defaults except what a local bench needs.
    writeFileSync(
      path.join(dataDir, "postgresql.auto.conf"),
      [
        `port = ${port}`,
        `listen_addresses = '127.0.0.1'`,
        `unix_socket_directories = '${base}'`,
        `max_connections = ${options.maxConnections}`,
        `autovacuum = on`,
        `logging_collector = off`,
        ...(options.statements
          ? [
              `shared_preload_libraries = 'pg_stat_statements'`,
              `pg_stat_statements.track = all`,
              `pg_stat_statements.track_planning = on`,
            ]
          : []),
        ...(options.slowStatementsMs !== undefined
          ? [
              `log_min_duration_statement = ${options.slowStatementsMs}`,
              `log_autovacuum_min_duration = 0`,
              `log_line_prefix = '%n [%p] '`,
            ]
          : []),
        ...(options.settings ?? []),
        "",
      ].join("\n"),
    );
    if (isRoot) await run("chown", ["postgres:", path.join(dataDir, "postgresql.auto.conf")]);
    await asUser("pg_ctl", ["-D", dataDir, "-l", path.join(base, "postgres.log"), "-w", "-t", "60", "start"]);
  } catch (err) {
    rmSync(base, { recursive: true, force: true });
    throw err;
  }
  let stopped = false;
  const adminUrl = `postgresql://postgres@127.0.0.1:${port}/postgres`;
  return {
    adminUrl,
    dataDir,
    logFile: path.join(base, "postgres.log"),
    async pid() {
      const { readFileSync } = await import("node:fs");
      return Number(readFileSync(path.join(dataDir, "postmaster.pid"), "utf8").split("\n")[0]);
    },
    readyWal: () => readyWalSegments(adminUrl),
    async stop() {
      if (stopped) return;
      stopped = true;
      await asUser("pg_ctl", ["-D", dataDir, "-m", "fast", "-w", "-t", "60", "stop"]).catch(() => undefined);
      rmSync(base, { recursive: true, force: true });
    },
  };
}
