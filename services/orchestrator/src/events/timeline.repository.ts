import { Prisma, type Db } from "@tog/db";

// The rows a task's timeline is built from (timeline.ts): the task, its steps, approvals and
// signals, read in one snapshot.

export interface TaskRow {
  status: string;
  query: string;
  mode: string | null;
  result: string | null;
  error: string;
  error_type: string | null;
  created_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

export interface StepRow {
  key: string;
  kind: string;
  name: string;
  agent_id: string;
  status: string;
  started_at: Date;
  completed_at: Date | null;
  output: string | null;
}

export interface ApprovalRow {
  id: string;
  status: string;
  tool_name: string;
  operation: string;
  risk_level: string;
  details: string;
  timeout_seconds: number;
  requested_at: Date;
  expires_at: Date;
  decided_at: Date | null;
  decided_by: string | null;
  comments: string | null;
  modified_action: string | null;
  run_id: string | null;
}

export interface SignalRow {
  id: string;
  name: string;
  payload: string;
  created_at: Date;
}

export interface TimelineRows {
  tasks: TaskRow[];
  steps: StepRow[];
  approvals: ApprovalRow[];
  signals: SignalRow[];
}

/**
 * raw: four reads in one REPEATABLE READ snapshot, JSON columns as text (jsonb prints in a
 * canonical form, so payloads are byte-stable), which Prisma's model API does not return.
 */
export async function readTimelineRows(db: Db, id: string): Promise<TimelineRows> {
  // One snapshot for the four reads, so a running task's timeline is consistent.
  const [tasks, steps, approvals, signals] = await db.$transaction(
    [
      db.$queryRaw<TaskRow[]>`
        SELECT status, query, mode, result, error, error_type, created_at, started_at, completed_at
        FROM tasks WHERE id = ${id}::uuid`,
      db.$queryRaw<StepRow[]>`
        SELECT key, kind, name, agent_id, status, started_at, completed_at, output::text AS output
        FROM task_steps WHERE task_id = ${id}::uuid`,
      db.$queryRaw<ApprovalRow[]>`
        SELECT id, status, tool_name, operation, risk_level, details::text AS details, timeout_seconds,
               requested_at, expires_at, decided_at, decided_by, comments, modified_action, run_id
        FROM approvals WHERE task_id = ${id}::uuid`,
      db.$queryRaw<SignalRow[]>`
        SELECT id::text AS id, name, payload::text AS payload, created_at
        FROM task_signals WHERE task_id = ${id}::uuid`,
    ],
    { isolationLevel: Prisma.TransactionIsolationLevel.RepeatableRead },
  );
  return { tasks, steps, approvals, signals };
}
