import type { Db } from "@tog/db";
import { Prisma } from "@tog/db";
import type { TaskEvent } from "@tog/events";
import type { TaskSpec } from "./workflow-context.ts";

// The runtime's view of the `tasks` row: claiming a run under a lease, heartbeats that extend
// it and report cancellation, and the final write. Every write after the claim is fenced by
// `lease_owner`, so a worker that lost its lease cannot change the task any more.

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
}

export type ClaimResult =
  | { outcome: "claimed"; task: ClaimedTask }
  /** No such task after the submit transaction finished: the submit was rolled back. */
  | { outcome: "missing" }
  | { outcome: "terminal"; status: string }
  /** Another worker holds a live lease. */
  | { outcome: "leased"; retryInMs: number };

export interface FinalWrite {
  status: "COMPLETED" | "FAILED" | "CANCELLED" | "TIMEOUT";
  result: string | null;
  error: string;
  errorType: string | null;
  mode: string | null;
  modelUsed: string | null;
  provider: string | null;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd: number } | null;
}

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
}

export class RunRepository {
  readonly #db: Db;

  constructor(options: { db: Db }) {
    this.#db = options.db;
  }

  /**
   * Takes the run: QUEUED → RUNNING, or a RUNNING task whose lease expired (its worker died).
   * The advisory lock is the one the submit transaction holds until commit, so a run that
   * arrives before its task row is visible waits for the submit instead of missing it.
   */
  async claim(taskId: string, owner: string, leaseMs: number, timeoutSeconds: number): Promise<ClaimResult> {
    return this.#db.$transaction(async (tx) => {
      await tx.$executeRaw`SELECT pg_advisory_xact_lock(hashtextextended(${taskId}, 0))`;
      const rows = await tx.$queryRaw<TaskRow[]>`
        UPDATE tasks SET
          status = 'RUNNING',
          attempts = attempts + 1,
          lease_owner = ${owner},
          lease_expires_at = now() + ${leaseMs} * interval '1 millisecond',
          started_at = coalesce(started_at, now()),
          deadline_at = coalesce(deadline_at, now() + ${timeoutSeconds} * interval '1 second'),
          updated_at = now()
        WHERE id = ${taskId}::uuid
          AND (status = 'QUEUED' OR (status = 'RUNNING' AND (lease_owner IS NULL OR lease_owner = ${owner} OR lease_expires_at < now())))
        RETURNING id::text, user_id::text, session_id::text, spec, trace_id, traceparent, attempts, created_at, started_at, deadline_at, cancel_requested_at, cancel_reason`;
      const row = rows[0];
      if (row) {
        return {
          outcome: "claimed",
          task: {
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
          },
        } as const;
      }
      const current = await tx.$queryRaw<{ status: string; wait_ms: number | null }[]>`
        SELECT status, ceil(extract(epoch FROM (lease_expires_at - now())) * 1000)::int AS wait_ms
        FROM tasks WHERE id = ${taskId}::uuid`;
      const found = current[0];
      if (!found) return { outcome: "missing" } as const;
      if (found.status === "RUNNING") return { outcome: "leased", retryInMs: Math.max(100, found.wait_ms ?? 1_000) } as const;
      return { outcome: "terminal", status: found.status } as const;
    });
  }

  /** Extends the lease; null when it was lost. Reports a pending cancellation. */
  async heartbeat(taskId: string, owner: string, leaseMs: number): Promise<{ cancelRequested: boolean; cancelReason: string | null } | null> {
    const rows = await this.#db.$queryRaw<{ cancel_requested_at: Date | null; cancel_reason: string | null }[]>`
      UPDATE tasks SET lease_expires_at = now() + ${leaseMs} * interval '1 millisecond'
      WHERE id = ${taskId}::uuid AND lease_owner = ${owner} AND status = 'RUNNING'
      RETURNING cancel_requested_at, cancel_reason`;
    const row = rows[0];
    return row ? { cancelRequested: row.cancel_requested_at !== null, cancelReason: row.cancel_reason } : null;
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

  async mode(taskId: string, owner: string, mode: string): Promise<void> {
    await this.#db.$executeRaw`
      UPDATE tasks SET mode = ${mode}, updated_at = now() WHERE id = ${taskId}::uuid AND lease_owner = ${owner}`;
  }

  async loadSteps(workflowId: string): Promise<StepRecord[]> {
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
      FROM task_steps WHERE workflow_id = ${workflowId}::uuid`;
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

  /** Highest seq the permanent log holds for the workflow (0 when none). */
  async persistedLastSeq(workflowId: string): Promise<number> {
    const rows = await this.#db.$queryRaw<{ max: number | null }[]>`
      SELECT max(seq) AS max FROM task_events WHERE workflow_id = ${workflowId}::uuid`;
    return rows[0]?.max ?? 0;
  }

  /** Checkpoints one completed step, fenced by the lease. */
  async commitStep(workflowId: string, owner: string, step: StepRecord): Promise<void> {
    const count = await this.#db.$executeRaw(insertStep(workflowId, owner, step));
    if (count !== 1) throw new LeaseLostError(workflowId);
  }

  /** The final status, result and usage, the finish step and the session's totals, in one transaction. */
  async finish(workflowId: string, owner: string, write: FinalWrite, step: StepRecord): Promise<void> {
    await this.#db.$transaction(async (tx) => {
      const updated = await tx.$queryRaw<{ session_id: string }[]>`
        UPDATE tasks SET
          status = ${write.status},
          result = ${write.result},
          error = ${write.error},
          error_type = ${write.errorType},
          mode = coalesce(${write.mode}, mode),
          model_used = ${write.modelUsed},
          provider = ${write.provider},
          input_tokens = ${write.usage?.inputTokens ?? null},
          output_tokens = ${write.usage?.outputTokens ?? null},
          total_tokens = ${write.usage?.totalTokens ?? null},
          cost_usd = ${write.usage?.costUsd ?? null},
          completed_at = now(),
          updated_at = now(),
          lease_owner = NULL,
          lease_expires_at = NULL
        WHERE id = ${workflowId}::uuid AND lease_owner = ${owner} AND status = 'RUNNING'
        RETURNING session_id::text`;
      const sessionId = updated[0]?.session_id;
      if (!sessionId) throw new LeaseLostError(workflowId);
      await tx.$executeRaw(insertStep(workflowId, null, step));
      if (write.usage) {
        await tx.$executeRaw`
          UPDATE sessions SET
            tokens_used = tokens_used + ${write.usage.totalTokens},
            total_cost_usd = total_cost_usd + ${write.usage.costUsd},
            updated_at = now(),
            last_activity_at = now()
          WHERE id = ${sessionId}::uuid`;
      }
    });
  }
}

function insertStep(workflowId: string, owner: string | null, step: StepRecord): Prisma.Sql {
  const events = step.events === null ? null : JSON.stringify(step.events);
  const output = step.output === undefined ? null : JSON.stringify(step.output);
  const fence =
    owner === null
      ? Prisma.empty
      : Prisma.sql`WHERE EXISTS (SELECT 1 FROM tasks WHERE id = ${workflowId}::uuid AND lease_owner = ${owner} AND status = 'RUNNING')`;
  return Prisma.sql`
    INSERT INTO task_steps (workflow_id, key, kind, name, agent_id, status, output, events, first_seq, last_seq, started_at, completed_at)
    SELECT ${workflowId}::uuid, ${step.key}, ${step.kind}, ${step.name}, ${step.agentId}, ${step.status},
           ${output}::jsonb, ${events}::json, ${step.firstSeq}, ${step.lastSeq}, ${step.startedAt}, ${step.completedAt}
    ${fence}
    ON CONFLICT (workflow_id, key) DO NOTHING`;
}
