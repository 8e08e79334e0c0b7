import pg from "pg";
import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.ts";

export interface DbClientOptions {
  databaseUrl: string;
  /** Connection pool size of this process. */
  poolMax?: number;
  /** PostgreSQL schema (search_path); tests isolate themselves with it. */
  schema?: string;
  /** Share an existing pool (see createDbPool) instead of opening one. */
  pool?: pg.Pool | undefined;
}

export type Db = PrismaClient;
export type DbPool = pg.Pool;

/**
 * The pg pool under Prisma. Hot paths that need several statements in one transaction (task
 * submit, run claim) use it directly: a Prisma interactive transaction costs about twice the
 * round trips of the same statements on a pg client.
 */
export function createDbPool(options: Pick<DbClientOptions, "databaseUrl" | "poolMax">): DbPool {
  const pool = new pg.Pool({
    connectionString: options.databaseUrl,
    max: options.poolMax ?? 10,
    // Statements sent with a `name` (the run's checkpoint, claim, lease and final write) are
    // planned once per connection and then reuse that plan. PostgreSQL's own choice kept planning
    // them on every call, and planning cost as much as running them (docs/performance.md
    // "Prepared statements"). Unnamed statements (Prisma's, everything else) are unaffected.
    // Every statement of the services finds its rows through an index, and no sequential scan is
    // planned while one exists: a plan cached when a table was nearly empty chose to scan it, and
    // kept scanning it as it grew (nothing re-plans it while the table is not analyzed, as with
    // autovacuum off): 600 tuples read per task after a few thousand tasks (docs/performance.md).
    options: "-c plan_cache_mode=force_generic_plan -c enable_seqscan=off",
  });
  // An idle client that loses its connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  // Nor a checked-out one: pg-pool drops its listener on checkout, and a client held between
  // statements (the submit transaction while it publishes the run) whose connection the server
  // cuts emits 'error' with nobody listening, which killed the orchestrator when PostgreSQL
  // restarted (docs/reliability.md "PostgreSQL"). The failure still reaches the holder: its next
  // query rejects, and the broken client is discarded on release.
  pool.on("connect", (client) => {
    client.on("error", () => undefined);
  });
  return pool;
}

export function createDbClient(options: DbClientOptions): Db {
  const adapter = new PrismaPg(
    options.pool ?? { connectionString: options.databaseUrl, max: options.poolMax ?? 10 },
    options.schema ? { schema: options.schema } : undefined,
  );
  return new PrismaClient({ adapter });
}
