import { withTransaction, type Db, type DbPool } from "@tog/db";
import { setTimeout as sleep } from "node:timers/promises";
import type { PoolClient } from "pg";
import type { TaskEvent } from "@tog/events";
import type { SessionAtClaim, TaskSpec } from "./flow-context.ts";
import { CheckpointRepository } from "./checkpoint.repository.ts";
import { EventLogRepository } from "./event-log.repository.ts";
import { GroupCommit } from "./group-commit.ts";
import { writeFinals, type FinalRecord, type FinalWrite } from "./final-write.repository.ts";
import { LeaseKeeper, type LeaseHolder, type LeaseState } from "./lease-keeper.ts";
import type { LocalSubmits } from "./local-submits.ts";

// The runtime's view of the `tasks` row: claiming a run under a lease, heartbeats that extend
// it and report cancellation, checkpoints and the final write (final-write.repository.ts). Every
// write after the claim is fenced by `lease_owner`, so a worker that lost its lease cannot
// change the task any more.

export interface ClaimedTask {
  id: string;
  userId: string;
  sessionId: string;
  spec: TaskSpec;
  traceId: string;
  traceparent: string | null;
  attempts: number;
  createdAt: Date;
  startedAt: Date;
  deadlineAt: Date;
  cancelRequested: boolean;
  cancelReason: string | null;
  /** The task's session as the claim found it; null when the session is gone. */
  session: SessionAtClaim | null;
}

export type ClaimResult =
  | { outcome: "claimed"; task: ClaimedTask }
  /** No such task after the submit transaction finished: the submit was rolled back. */
  | { outcome: "missing" }
  | { outcome: "terminal"; status: string }
  /** Another worker holds a live lease. */
  | { outcome: "leased"; retryInMs: number };

export interface StepRecord {
  key: string;
  kind: string;
  name: string;
  agentId: string;
  status: string;
  output: unknown;
  events: TaskEvent[] | null;
  firstSeq: number | null;
  lastSeq: number | null;
  startedAt: Date;
  completedAt: Date;
}

/** The caller no longer holds the run's lease (another worker took it over). */
export class LeaseLostError extends Error {
  constructor(taskId: string) {
    super(`Lease on task ${taskId} lost`);
    this.name = "LeaseLostError";
  }
}

interface TaskRow {
  id: string;
  user_id: string;
  session_id: string;
  spec: TaskSpec;
  trace_id: string;
  traceparent: string | null;
  attempts: number;
  created_at: Date;
  started_at: Date;
  deadline_at: Date;
  cancel_requested_at: Date | null;
  cancel_reason: string | null;
  /** The session's columns; null when the session row is gone. */
  token_budget: number | null;
  tokens_used: number | null;
  task_count: number | null;
}

export class RunRepository {
  readonly #db: Db;
  readonly #pool: DbPool;
  readonly #checkpoints: CheckpointRepository;
  readonly #eventLog: EventLogRepository;
  readonly #claims: GroupCommit<ClaimRequest, TaskRow | undefined>;
  /** Per final write: whether views of its task's session may be cached; undefined when its lease was lost. */
  readonly #finishes: GroupCommit<FinalRecord, boolean | undefined>;
  readonly #keepers = new Map<string, LeaseKeeper>();
  readonly #localSubmits: LocalSubmits | undefined;

  /**
   * `pool`: the pg pool under `db`; claim, checkpoints and finish run on it. `localSubmits`: the
   * submits open in this process, when it also accepts them (ORCHESTRATOR_WORKER=on).
   */
  constructor(options: { db: Db; pool: DbPool; localSubmits?: LocalSubmits | undefined }) {
    this.#db = options.db;
    this.#pool = options.pool;
    this.#localSubmits = options.localSubmits;
    this.#checkpoints = new CheckpointRepository({ pool: options.pool });
    this.#eventLog = new EventLogRepository({ pool: options.pool });
    this.#claims = new GroupCommit({ flush: (claims) => this.#claimAll(claims) });
    this.#finishes = new GroupCommit({ flush: (finishes) => this.#finishAll(finishes) });
  }

  #transaction<T>(fn: (client: PoolClient) => Promise<T>): Promise<T> {
    return withTransaction(this.#pool, fn);
  }

  /**
   * Takes the run: QUEUED → RUNNING, or a RUNNING task whose lease expired (its worker died).
   * The advisory lock is the one the submit transaction holds until commit, so a run that
   * arrives before its task row is visible waits for the submit instead of missing it.
   */
  async claim(taskId: string, owner: string, leaseMs: number, timeoutSeconds: number): Promise<ClaimResult> {
    // Fast path, one statement: the task is usually committed and queued by the time its run
    // arrives. Only when it is not claimable do we wait for the submit transaction's lock to tell
    // "not committed yet" from "missing", "terminal" or "leased".
    // The fast path is group-committed with the other claims of this process (group-commit.ts).
    // The run is published inside the submit transaction, so it often arrives a moment before
    // that transaction commits: try again a few times, holding no connection, before waiting
    // on the submit's lock (a connection held per waiting run drained the pool under load).
    // Submitted by this very process and not committed yet: wait for its transaction to end, so
    // the first claim finds the row (local-submits.ts).
    const local = this.#localSubmits?.ended(taskId);
    if (local) await local;
    for (const pauseMs of CLAIM_RETRY_PAUSES_MS) {
      if (pauseMs > 0) await sleep(pauseMs);
      const fast = await this.#claims.submit({ taskId, owner, leaseMs, timeoutSeconds });
      if (fast) return { outcome: "claimed", task: claimedTask(fast) };
    }
    return this.#transaction(async (tx) => {
      await tx.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [taskId]);
      const rows = await tx.query<TaskRow>({
        name: "claim",
        text: CLAIM_SQL,
        values: [taskId, owner, leaseMs, timeoutSeconds],
      });
      const row = rows.rows[0];
      if (row) return { outcome: "claimed", task: claimedTask(row) } as const;
      const current = await tx.query<{ status: string; wait_ms: number | null }>(
        "SELECT status, ceil(extract(epoch FROM (lease_expires_at - now())) * 1000)::int AS wait_ms FROM tasks WHERE id = $1::uuid",
        [taskId],
      );
      const found = current.rows[0];
      if (!found) return { outcome: "missing" } as const;
      if (found.status === "RUNNING")
        return { outcome: "leased", retryInMs: Math.max(100, found.wait_ms ?? 1_000) } as const;
      return { outcome: "terminal", status: found.status } as const;
    });
  }

  /** One statement for claims sharing owner, lease and timeout (in practice: all of a process's). */
  async #claimAll(claims: ClaimRequest[]): Promise<(TaskRow | undefined)[]> {
    const found = new Map<string, TaskRow>();
    const groups = new Map<string, ClaimRequest[]>();
    for (const c of claims) {
      const key = `${c.owner}\u0000${c.leaseMs}\u0000${c.timeoutSeconds}`;
      groups.set(key, [...(groups.get(key) ?? []), c]);
    }
    for (const group of groups.values()) {
      const { owner, leaseMs, timeoutSeconds } = group[0]!;
      const res = await this.#pool.query<TaskRow>({
        name: "claim-many",
        text: CLAIM_MANY_SQL,
        values: [group.map((c) => c.taskId), owner, leaseMs, timeoutSeconds],
      });
      for (const row of res.rows) found.set(row.id, row);
    }
    return claims.map((c) => found.get(c.taskId.toLowerCase()));
  }

  /**
   * Keeps the lease on a claimed task alive (renewed at a third of `leaseMs`) until the returned
   * function is called. All leases of one owner are renewed by one statement per tick.
   */
  holdLease(taskId: string, owner: string, leaseMs: number, holder: LeaseHolder): () => void {
    const key = `${owner}\u0000${leaseMs}`;
    let keeper = this.#keepers.get(key);
    if (!keeper) {
      keeper = new LeaseKeeper({
        intervalMs: Math.max(200, Math.floor(leaseMs / 3)),
        renew: (ids) => this.#renewLeases(ids, owner, leaseMs),
      });
      this.#keepers.set(key, keeper);
    }
    return keeper.hold(taskId, holder);
  }

  async #renewLeases(taskIds: string[], owner: string, leaseMs: number): Promise<Map<string, LeaseState>> {
    const res = await this.#pool.query<{ id: string; cancel_requested: boolean; cancel_reason: string | null }>({
      name: "renew-leases",
      text: RENEW_LEASES_SQL,
      values: [taskIds, owner, leaseMs],
    });
    return new Map(res.rows.map((r) => [r.id, { cancelRequested: r.cancel_requested, cancelReason: r.cancel_reason }]));
  }

  async cancelState(taskId: string): Promise<{ cancelRequested: boolean; cancelReason: string | null }> {
    const rows = await this.#db.$queryRaw<{ cancel_requested_at: Date | null; cancel_reason: string | null }[]>`
      SELECT cancel_requested_at, cancel_reason FROM tasks WHERE id = ${taskId}::uuid`;
    const row = rows[0];
    return { cancelRequested: row?.cancel_requested_at != null, cancelReason: row?.cancel_reason ?? null };
  }

  /** Lets another worker take the run at once (graceful shutdown). */
  async release(taskId: string, owner: string): Promise<void> {
    await this.#db.$executeRaw`
      UPDATE tasks SET lease_expires_at = now() - interval '1 millisecond'
      WHERE id = ${taskId}::uuid AND lease_owner = ${owner} AND status = 'RUNNING'`;
  }

  async loadSteps(taskId: string): Promise<StepRecord[]> {
    const rows = await this.#db.$queryRaw<
      {
        key: string;
        kind: string;
        name: string;
        agent_id: string;
        status: string;
        output: unknown;
        events: TaskEvent[] | null;
        first_seq: number | null;
        last_seq: number | null;
        started_at: Date;
        completed_at: Date;
      }[]
    >`SELECT key, kind, name, agent_id, status, output, events, first_seq, last_seq, started_at, completed_at
      FROM task_steps WHERE task_id = ${taskId}::uuid`;
    return rows.map((r) => ({
      key: r.key,
      kind: r.kind,
      name: r.name,
      agentId: r.agent_id,
      status: r.status,
      output: r.output,
      events: r.events,
      firstSeq: r.first_seq,
      lastSeq: r.last_seq,
      startedAt: r.started_at,
      completedAt: r.completed_at,
    }));
  }

  /** Highest seq the permanent log holds for the task (0 when none). */
  async persistedLastSeq(taskId: string): Promise<number> {
    const rows = await this.#db.$queryRaw<{ max: number | null }[]>`
      SELECT max(seq) AS max FROM task_events WHERE task_id = ${taskId}::uuid`;
    return rows[0]?.max ?? 0;
  }

  /**
   * Live events of a run into the permanent log, fenced by the lease, before they are published
   * (event-log.repository.ts); group-committed with the other runs of this process.
   */
  async logEvents(taskId: string, owner: string, events: readonly TaskEvent[]): Promise<void> {
    if (events.length === 0) return;
    if (!(await this.#eventLog.write({ taskId, owner, events }))) throw new LeaseLostError(taskId);
  }

  /** The task's logged events above `afterSeq` (at most `limit`, in seq order), as they were published. */
  async loggedEventsAfter(taskId: string, afterSeq: number, limit = 10_000): Promise<TaskEvent[]> {
    const rows = await this.#db.$queryRaw<{ event: string }[]>`
      SELECT event::text AS event FROM task_events
      WHERE task_id = ${taskId}::uuid AND seq > ${afterSeq}::int ORDER BY seq LIMIT ${limit}::int`;
    return rows.map((r) => JSON.parse(r.event) as TaskEvent);
  }

  /**
   * Checkpoints one completed step, fenced by the lease; `mode` also records the run's mode.
   * Steps of all runs of this process are group-committed (checkpoint.repository.ts).
   */
  async commitStep(taskId: string, owner: string, step: StepRecord, mode?: string): Promise<void> {
    await this.commitSteps(taskId, owner, [step], mode);
  }

  /** Steps written in one statement, all or none (a step with the lazy steps before it). */
  async commitSteps(taskId: string, owner: string, steps: StepRecord[], mode?: string): Promise<void> {
    if (!(await this.#checkpoints.write({ taskId, owner, steps, mode }))) throw new LeaseLostError(taskId);
  }

  /**
   * The final status, result and usage, the finish step and the session's totals, in one
   * statement, fenced by the lease. Final writes of this process's runs are group-committed.
   * Resolves to whether views of the task's session may be cached (then the run hints the change).
   */
  async finish(
    taskId: string,
    owner: string,
    write: FinalWrite,
    step: StepRecord,
    lazySteps: StepRecord[] = [],
  ): Promise<{ viewsCached: boolean }> {
    const viewsCached = await this.#finishes.submit({ taskId, owner, write, step, lazySteps });
    if (viewsCached === undefined) throw new LeaseLostError(taskId);
    return { viewsCached };
  }

  async #finishAll(finals: FinalRecord[]): Promise<(boolean | undefined)[]> {
    const done = await writeFinals(this.#pool, finals);
    return finals.map((f) => done.get(f.taskId.toLowerCase()));
  }
}

// The rows are locked in id order first, as the checkpoint and live-log fences lock theirs: two
// statements of one worker that lock several of its tasks cannot wait on each other in a cycle
// (docs/reliability.md "The lease fence").
const RENEW_LEASES_SQL = `
  WITH l AS (
    SELECT id FROM tasks WHERE id = ANY($1::uuid[]) AND lease_owner = $2 AND status = 'RUNNING'
    ORDER BY id FOR NO KEY UPDATE
  )
  UPDATE tasks SET lease_expires_at = now() + $3 * interval '1 millisecond' FROM l WHERE tasks.id = l.id
  RETURNING tasks.id::text, tasks.cancel_requested_at IS NOT NULL AS cancel_requested, tasks.cancel_reason`;

/** Pauses before each fast claim attempt: about 50 ms in all before the locking path. */
const CLAIM_RETRY_PAUSES_MS = [0, 2, 4, 8, 16, 20];

interface ClaimRequest {
  taskId: string;
  owner: string;
  leaseMs: number;
  timeoutSeconds: number;
}

const CLAIM_SET = `
    status = 'RUNNING',
    attempts = attempts + 1,
    lease_owner = $2,
    lease_expires_at = now() + $3 * interval '1 millisecond',
    started_at = coalesce(started_at, now()),
    deadline_at = coalesce(deadline_at, now() + $4 * interval '1 second'),
    updated_at = now()`;
const CLAIMABLE = `(status = 'QUEUED' OR (status = 'RUNNING' AND (lease_owner IS NULL OR lease_owner = $2 OR lease_expires_at < now())))`;
const CLAIM_RETURNING = `id, user_id, session_id, spec, trace_id, traceparent, attempts, created_at, started_at, deadline_at,
            cancel_requested_at, cancel_reason`;
// The claimed rows with their sessions' budget and task count, read by primary key in the same
// statement: a run whose task is its session's only one needs no other read before its first
// model call (sessions/session-context.ts; docs/performance.md "A session's only task").
const withSession = (update: string) => `WITH c AS (${update} RETURNING ${CLAIM_RETURNING})
  SELECT c.id::text, c.user_id::text, c.session_id::text, c.spec, c.trace_id, c.traceparent, c.attempts, c.created_at,
         c.started_at, c.deadline_at, c.cancel_requested_at, c.cancel_reason, s.token_budget, s.tokens_used, s.task_count
  FROM c LEFT JOIN sessions s ON s.id = c.session_id`;
// The claim commits without waiting for the WAL flush: losing it in a PostgreSQL crash loses
// nothing a client was told, and its worker's next write, fenced by the lease, then stops that run
// while the unacknowledged message is claimed again (docs/decisions.md "Durable execution").
// `set_config(…, true)` lasts until the statement's own transaction commits.
const CLAIM_MANY_SQL = withSession(
  `WITH async_commit AS MATERIALIZED (SELECT set_config('synchronous_commit', 'off', true))
   UPDATE tasks SET ${CLAIM_SET} FROM async_commit WHERE id = ANY($1::uuid[]) AND ${CLAIMABLE}`,
);

const CLAIM_SQL = withSession(`UPDATE tasks SET ${CLAIM_SET} WHERE id = $1::uuid AND ${CLAIMABLE}`);

function claimedTask(row: TaskRow): ClaimedTask {
  return {
    id: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    spec: row.spec,
    traceId: row.trace_id,
    traceparent: row.traceparent,
    attempts: row.attempts,
    createdAt: row.created_at,
    startedAt: row.started_at,
    deadlineAt: row.deadline_at,
    cancelRequested: row.cancel_requested_at !== null,
    cancelReason: row.cancel_reason,
    session:
      row.token_budget === null
        ? null
        : { tokenBudget: row.token_budget, tokensUsed: row.tokens_used ?? 0, taskCount: row.task_count ?? 0 },
  };
}
