import type { DbPool } from "@tog/db";
import type { PoolClient } from "pg";
import type { StepRecord } from "./run.repository.ts";
import { linesArray } from "./json-lines.ts";
import { stepColumns, stepEventColumns, withStepJsonAsLines } from "./step-columns.ts";

// The final write, the one statement that ends tasks, shared by runs and by the cancel of a queued task.
//
// It writes the terminal status, result and usage, the `finish` step holding the terminal event,
// the events of that step and of the staged ones into the permanent log, and the sessions' totals. Runs end their tasks through it (group-committed, run.repository.ts),
// a cancel before any run claimed the task too (tasks/cancel.repository.ts), so a task ends one
// way (docs/architecture.md, "Orchestrator runtime").

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

export interface FinalRecord {
  taskId: string;
  /**
   * The fence. A run's lease owner: the task must still be RUNNING under that lease. Null for a
   * task no run has claimed: it must still be QUEUED (the caller holds its row lock).
   */
  owner: string | null;
  write: FinalWrite;
  /** The `finish` step, with the terminal event. */
  step: StepRecord;
  /** Lazy steps of the run not written yet (run-context.ts): written with the final state or not at all. */
  lazySteps?: readonly StepRecord[] | undefined;
}

/**
 * Writes the final records in one statement. Returns the tasks written, by id (lower case), each
 * with whether views of its session may be cached (`sessions.views_cached`, read under the row
 * lock of the totals' update): only then does its writer send a cache hint. A task whose fence
 * no longer holds is left out, with its step and session totals.
 */
export async function writeFinals(
  db: DbPool | PoolClient,
  finals: readonly FinalRecord[],
): Promise<Map<string, boolean>> {
  const cols: unknown[][] = Array.from({ length: 23 }, () => []);
  for (const f of finals) {
    const { write: w, step: st } = f;
    const u = w.usage;
    const values = [
      f.taskId,
      f.owner,
      w.status,
      w.result,
      w.error,
      w.errorType,
      w.mode,
      w.modelUsed,
      w.provider,
      u?.inputTokens ?? null,
      u?.outputTokens ?? null,
      u?.totalTokens ?? null,
      u?.costUsd ?? null,
      ...stepColumns(st),
    ];
    values.forEach((v, k) => cols[k]!.push(v));
  }
  const lazy: unknown[][] = Array.from({ length: 11 }, () => []);
  for (const f of finals) {
    for (const st of f.lazySteps ?? []) [f.taskId, ...stepColumns(st)].forEach((v, k) => lazy[k]!.push(v));
  }
  const events = stepEventColumns(finals.flatMap((f) => [...(f.lazySteps ?? []), f.step]));
  const res = await db.query<{ id: string; views_cached: boolean }>({
    name: "final-write",
    text: FINAL_WRITE_SQL,
    values: [...withStepJsonAsLines(cols, 13), ...withStepJsonAsLines(lazy, 1), ...events],
  });
  return new Map(res.rows.map((r) => [r.id, r.views_cached]));
}

// raw: an `unnest` batch of many tasks in one statement with data-modifying CTEs, which Prisma
// cannot say (docs/performance.md "Run", final write).
// `last_activity_at` (indexed, for lists and the purge) moves on submit, not here, so both
// updates stay HOT (docs/performance.md). A task no run claimed used nothing: its session is
// left as it is. The task rows are locked in id order first (lk), as every statement that locks
// several tasks of a worker locks them, so none waits on another in a cycle (docs/reliability.md
// "The lease fence"). The totals' update returns the session's `views_cached` as of its own row
// lock, so a session service that marks the session waits for this commit or is seen here
// (docs/decisions.md "Sessions", Cache); a task no run claimed has no such row and reads false (its
// cancel hints anyway).
const FINAL_WRITE_SQL = `
  WITH v AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[],
                         $10::int[], $11::int[], $12::int[], $13::float8[], $14::text[], $15::text[], $16::text[], $17::text[], $18::text[],
                         ${linesArray("$19")}, $20::int[], $21::int[], $22::timestamptz[], $23::timestamptz[])
      AS v(id, owner, status, result, error, error_type, mode, model_used, provider, input_tokens, output_tokens, total_tokens, cost_usd,
           step_key, step_kind, step_name, step_agent, step_status, step_output, first_seq, last_seq, started_at, completed_at)
  ),
  lk AS (
    SELECT tasks.id FROM tasks JOIN v ON tasks.id = v.id ORDER BY tasks.id FOR NO KEY UPDATE OF tasks
  ),
  t AS (
    UPDATE tasks SET
      status = v.status, result = v.result, error = v.error, error_type = v.error_type, mode = coalesce(v.mode, tasks.mode),
      model_used = v.model_used, provider = v.provider, input_tokens = v.input_tokens, output_tokens = v.output_tokens,
      total_tokens = v.total_tokens, cost_usd = v.cost_usd,
      completed_at = now(), updated_at = now(), lease_owner = NULL, lease_expires_at = NULL
    FROM v JOIN lk ON lk.id = v.id WHERE tasks.id = v.id
      AND ((tasks.lease_owner = v.owner AND tasks.status = 'RUNNING') OR (v.owner IS NULL AND tasks.status = 'QUEUED'))
    RETURNING tasks.id, tasks.session_id
  ),
  st AS (
    INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, output, first_seq, last_seq, started_at, completed_at)
    SELECT v.id, v.step_key, v.step_kind, v.step_name, v.step_agent, v.step_status, v.step_output::jsonb,
           v.first_seq, v.last_seq, v.started_at, v.completed_at
    FROM v JOIN t ON t.id = v.id
    UNION ALL
    SELECT x.task_id, x.key, x.kind, x.name, x.agent_id, x.status, x.output::jsonb,
           x.first_seq, x.last_seq, x.started_at, x.completed_at
    FROM unnest($24::uuid[], $25::text[], $26::text[], $27::text[], $28::text[], $29::text[], ${linesArray("$30")},
                $31::int[], $32::int[], $33::timestamptz[], $34::timestamptz[])
      AS x(task_id, key, kind, name, agent_id, status, output, first_seq, last_seq, started_at, completed_at)
    JOIN t ON t.id = x.task_id
    ON CONFLICT (task_id, key) DO NOTHING
  ),
  ev AS (
    INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
    SELECT u.task_id, u.seq, u.type, u.agent_id, u.ts, u.event::json
    FROM unnest($35::uuid[], $36::int[], $37::text[], $38::text[], $39::timestamptz[], ${linesArray("$40")})
      AS u(task_id, seq, type, agent_id, ts, event)
    JOIN t ON t.id = u.task_id
    ON CONFLICT (task_id, seq) DO NOTHING
  ),
  s AS (
    UPDATE sessions SET tokens_used = tokens_used + agg.tokens, total_cost_usd = total_cost_usd + agg.cost, updated_at = now()
    FROM (SELECT t.session_id, sum(coalesce(v.total_tokens, 0))::int AS tokens, sum(coalesce(v.cost_usd, 0)) AS cost
          FROM t JOIN v ON v.id = t.id WHERE v.owner IS NOT NULL GROUP BY t.session_id) agg
    WHERE sessions.id = agg.session_id
    RETURNING sessions.id, sessions.views_cached
  )
  SELECT t.id::text, coalesce(s.views_cached, false) AS views_cached FROM t LEFT JOIN s ON s.id = t.session_id`;
