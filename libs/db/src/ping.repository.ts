// The one statement that touches no table: the PostgreSQL probe of readiness, start-up waits
// and the dependency gauges of every service.

/** What `SELECT 1` needs of a Prisma client (a `Db` or a test's stand-in). */
export interface PingableDb {
  $queryRaw(query: TemplateStringsArray, ...values: unknown[]): PromiseLike<unknown>;
}

/** Resolves when PostgreSQL answers a trivial query. */
export async function pingDb(db: PingableDb): Promise<void> {
  await db.$queryRaw`SELECT 1`;
}
