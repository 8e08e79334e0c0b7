// The claim commits without waiting for the WAL flush (docs/decisions.md "Durable execution",
// docs/performance.md "Claims that do not wait for the disk"); every other write of the run waits.
import { randomUUID } from "node:crypto";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it, vi } from "vitest";
import { createDbClient, createDbPool, migrate, type Db, type DbPool } from "@tog/db";
import { untilPostgresAnswers, withDatabase } from "@tog/testkit";
import { ownServersDir, startOwnPostgres, type OwnServer } from "@tog/tests-e2e/own-servers";
import { LeaseLostError, RunRepository, type StepRecord } from "../../src/runtime/run.repository.ts";
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

// What docs/decisions.md "The claim does not wait for the disk" relies on, on a PostgreSQL of the
// test's own that crashes: one of its processes SIGKILLed makes the postmaster stop every other and
// recover from the WAL on disk, as after a crash of the whole server. Nothing there writes the WAL
// out between the claim and the crash (the WAL writer waits 10 s between rounds; no autovacuum,
// background writer or timed checkpoint), so the claim's commit record is lost with the memory.
describe("a claim lost in a crash of PostgreSQL (a server of its own)", () => {
  let dirs: ReturnType<typeof ownServersDir>;
  let server: OwnServer;
  let url: string;
  let pool: DbPool;
  let db: Db;
  beforeAll(async () => {
    dirs = ownServersDir("tog-claim-crash");
    server = await startOwnPostgres(dirs.dir, {
      settings: { wal_writer_delay: "10s", autovacuum: "off", bgwriter_lru_maxpages: "0", checkpoint_timeout: "1h" },
    });
    const admin = new pg.Client({ connectionString: server.url });
    await admin.connect();
    await admin.query("CREATE DATABASE tog");
    await admin.end();
    url = withDatabase(server.url, "tog");
    await migrate({ databaseUrl: url });
    open();
  }, 120_000);
  afterAll(async () => {
    await db?.$disconnect();
    await pool?.end().catch(() => undefined);
    await server?.stop();
    dirs?.remove();
  });

  function open(): void {
    pool = createDbPool({ databaseUrl: url, poolMax: 2 });
    pool.on("error", () => undefined);
    db = createDbClient({ databaseUrl: url, pool });
  }

  /**
   * The pool's connections died with the crashed server, and one may still look idle to pg-pool
   * when the next query is handed to it (read ECONNRESET): start over with new connections, as a
   * service's next attempt would.
   */
  async function reopen(): Promise<void> {
    await db.$disconnect().catch(() => undefined);
    await pool.end().catch(() => undefined);
    open();
  }

  async function crash(): Promise<void> {
    const victim = new pg.Client({ connectionString: url });
    victim.on("error", () => undefined);
    await victim.connect();
    const { rows } = await victim.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
    process.kill(rows[0]!.pid, "SIGKILL");
    await victim.end().catch(() => undefined);
    await untilPostgresAnswers(url, 30_000);
  }

  it("leaves the task QUEUED; another worker claims it, and the first owner's next write is refused", async () => {
    const userId = randomUUID();
    const sessionId = randomUUID();
    const taskId = randomUUID();
    await pool.query("INSERT INTO users (id, name) VALUES ($1, 'crash')", [userId]);
    await pool.query("INSERT INTO sessions (id, user_id, token_budget, task_count) VALUES ($1, $2, 1000, 1)", [
      sessionId,
      userId,
    ]);
    await pool.query(
      `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id)
       VALUES ($1, $2, $3, 'lost claim', 'QUEUED', '{}'::jsonb, 'trace')`,
      [taskId, userId, sessionId],
    );
    const runs = new RunRepository({ db, pool });
    expect((await runs.claim(taskId, "worker-a", 60_000, 60)).outcome).toBe("claimed");
    const seen = await pool.query<{ status: string }>("SELECT status FROM tasks WHERE id = $1", [taskId]);
    expect(seen.rows[0]!.status).toBe("RUNNING");

    await crash();
    await reopen();

    const after = await pool.query<{ status: string; lease_owner: string | null; attempts: number }>(
      "SELECT status, lease_owner, attempts FROM tasks WHERE id = $1",
      [taskId],
    );
    expect(after.rows[0]).toEqual({ status: "QUEUED", lease_owner: null, attempts: 0 });
    const runsAfter = new RunRepository({ db, pool });
    expect((await runsAfter.claim(taskId, "worker-b", 60_000, 60)).outcome).toBe("claimed");
    const step: StepRecord = {
      key: "tool:1",
      kind: "tool",
      name: "workspace_write",
      agentId: "orchestrator",
      status: "completed",
      output: { ok: true },
      events: [],
      firstSeq: null,
      lastSeq: null,
      startedAt: new Date(),
      completedAt: new Date(),
    };
    await expect(runsAfter.commitSteps(taskId, "worker-a", [step])).rejects.toBeInstanceOf(LeaseLostError);
    const steps = await pool.query("SELECT key FROM task_steps WHERE task_id = $1", [taskId]);
    expect(steps.rows).toEqual([]);
  }, 60_000);
});
