// The claim commits without waiting for the WAL flush (docs/decisions.md "Durable execution",
// docs/performance.md "Claims that do not wait for the disk"); every other write of the run waits.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDbPool, type DbPool } from "@tog/db";
import { RunRepository } from "../../src/runtime/run.repository.ts";
import { openSubmitTransaction, startRuntimeHarness, type RuntimeHarness } from "./harness.ts";

describe("the claim's commit (PostgreSQL)", () => {
  let h: RuntimeHarness;
  let pool: DbPool;
  beforeAll(async () => {
    h = await startRuntimeHarness("claim-commit");
    // One connection: whatever a statement leaves set on it, the next statement sees.
    pool = createDbPool({ databaseUrl: h.databaseUrl, poolMax: 1 });
  });
  afterAll(async () => {
    await pool?.end();
    await h?.close();
  });

  async function queuedTask(): Promise<string> {
    const taskId = randomUUID();
    const submit = await openSubmitTransaction(h, taskId, "claim commit");
    await submit.query("COMMIT");
    submit.release();
    return taskId;
  }

  /** The value of `synchronous_commit` at the end of each statement's transaction, read just before it commits. */
  function settingAtCommit() {
    const seen: { name: string | undefined; setting: string }[] = [];
    const spy = vi.spyOn(pool, "query").mockImplementation((async (config: { name?: string }) => {
      const client = await pool.connect();
      try {
        await client.query("BEGIN");
        const result = await client.query(config as never);
        const { rows } = await client.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s");
        seen.push({ name: config.name, setting: rows[0]!.s });
        await client.query("COMMIT");
        return result;
      } finally {
        client.release();
      }
    }) as never);
    return { seen, restore: () => spy.mockRestore() };
  }

  it("claims with synchronous_commit off for its own transaction", async () => {
    const taskId = await queuedTask();
    const runs = new RunRepository({ db: h.db, pool });
    const probe = settingAtCommit();
    try {
      const result = await runs.claim(taskId, "worker-a", 3_000, 60);
      expect(result.outcome).toBe("claimed");
    } finally {
      probe.restore();
    }
    expect(probe.seen).toEqual([{ name: "claim-many", setting: "off" }]);
  });

  it("leaves the connection committing synchronously for the statements after it", async () => {
    const taskId = await queuedTask();
    const runs = new RunRepository({ db: h.db, pool });
    expect((await runs.claim(taskId, "worker-a", 3_000, 60)).outcome).toBe("claimed");
    const { rows } = await pool.query<{ s: string }>("SELECT current_setting('synchronous_commit') AS s");
    expect(rows[0]!.s).toBe("on");
    const row = await pool.query<{ status: string; lease_owner: string }>(
      "SELECT status, lease_owner FROM tasks WHERE id = $1",
      [taskId],
    );
    expect(row.rows[0]).toEqual({ status: "RUNNING", lease_owner: "worker-a" });
  });
});
