import type pg from "pg";
import type { DbPool } from "./client.ts";

// raw: the transaction frame of the hot paths that run on a pg client (docs/performance.md): one
// pooled client, ROLLBACK of whatever the work opened when it fails, the client back to the pool
// either way. No table of its own.

/**
 * Runs `work` on one pooled client. The work issues its own BEGIN and COMMIT (the hot paths send
 * BEGIN in the same round trip as their first statement); on failure an open transaction is
 * rolled back, so the client returns to the pool clean.
 */
export async function withClient<T>(pool: DbPool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  const client = await pool.connect();
  try {
    return await work(client);
  } catch (err) {
    await client.query("ROLLBACK").catch(() => undefined);
    throw err;
  } finally {
    client.release();
  }
}

/** BEGIN, `work`, COMMIT on one pooled client; ROLLBACK when anything fails. */
export function withTransaction<T>(pool: DbPool, work: (client: pg.PoolClient) => Promise<T>): Promise<T> {
  return withClient(pool, async (client) => {
    await client.query("BEGIN");
    const result = await work(client);
    await client.query("COMMIT");
    return result;
  });
}
