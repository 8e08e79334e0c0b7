import type { Db } from "@tog/db";
import { Prisma } from "@tog/db";
import type { ExecutionMode, RequestMode, TaskDetail, TaskStatus } from "@tog/proto";

// Reads of the tasks table for the API (GetTask, ListTasks). The row shape is the SQL's own
// (snake_case, ids as text), which toDetail turns into the wire's TaskDetail.

export interface TaskRow {
  id: string;
  user_id: string;
  session_id: string;
  query: string;
  status: TaskStatus;
  mode: ExecutionMode | null;
  requested_mode: RequestMode | null;
  result: string | null;
  error: string;
  error_type: string | null;
  model_used: string | null;
  provider: string | null;
  input_tokens: number | null;
  output_tokens: number | null;
  total_tokens: number | null;
  cost_usd: number | null;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  completed_at: Date | null;
}

const COLUMNS = Prisma.sql`id::text, user_id::text, session_id::text, query, status, mode, requested_mode, result, error, error_type,
  model_used, provider, input_tokens, output_tokens, total_tokens, cost_usd, created_at, updated_at, started_at, completed_at`;

export class TaskRepository {
  readonly #db: Db;

  constructor(options: { db: Db }) {
    this.#db = options.db;
  }

  async get(taskId: string): Promise<TaskRow | null> {
    // raw: by primary key on every task read, in the row shape the lists share (docs/performance.md "Reads").
    const rows = await this.#db.$queryRaw<TaskRow[]>`SELECT ${COLUMNS} FROM tasks WHERE id = ${taskId}::uuid`;
    return rows[0] ?? null;
  }

  /**
   * A page of the user's tasks, newest first, and the exact number matching the filters. The
   * total comes from the per-user counters (or the session's own task count), never from
   * counting rows, so its cost does not grow with the user's history. A page filtered by status
   * walks the user's index and is cut at the number of matches left, so an empty or finished
   * result stops at once. Only the status + session combination counts rows, within one session.
   */
  async list(q: {
    userId: string;
    status?: TaskStatus | undefined;
    sessionId?: string | undefined;
    limit: number;
    offset: number;
  }): Promise<{ rows: TaskRow[]; total: number }> {
    const total = await this.#count(q);
    const limit = Math.min(q.limit, Math.max(0, total - q.offset));
    if (limit === 0) return { rows: [], total };
    // raw: SQL functions that plan in index order whatever the statistics say (migration
    // 20261124160000_list_plans; docs/performance.md "Plans that do not depend on statistics").
    // A session's owner was checked when its id was resolved.
    const status = q.status ?? null;
    const rows = q.sessionId
      ? await this.#db.$queryRaw<
          TaskRow[]
        >`SELECT ${COLUMNS} FROM session_tasks_newest(${q.sessionId}::uuid, ${status}::varchar, ${limit}::int, ${q.offset}::int)`
      : await this.#db.$queryRaw<
          TaskRow[]
        >`SELECT ${COLUMNS} FROM tasks_page(${q.userId}::uuid, ${status}::varchar, ${limit}::int, ${q.offset}::int)`;
    return { rows, total };
  }

  async #count(q: {
    userId: string;
    status?: TaskStatus | undefined;
    sessionId?: string | undefined;
  }): Promise<number> {
    // raw: counters summed per user, the session's kept count (docs/performance.md "user_counters").
    if (q.sessionId !== undefined) {
      const rows = q.status
        ? await this.#db.$queryRaw<{ n: bigint }[]>`
            SELECT count(*) AS n FROM tasks WHERE session_id = ${q.sessionId}::uuid AND user_id = ${q.userId}::uuid AND status = ${q.status}`
        : await this.#db.$queryRaw<{ n: bigint }[]>`
            SELECT task_count::bigint AS n FROM sessions WHERE id = ${q.sessionId}::uuid AND user_id = ${q.userId}::uuid`;
      return Number(rows[0]?.n ?? 0);
    }
    const column = q.status ? STATUS_COUNTER[q.status] : ALL_TASKS;
    const rows = await this.#db.$queryRaw<
      { n: bigint | null }[]
    >`SELECT sum(${column})::bigint AS n FROM user_counters WHERE user_id = ${q.userId}::uuid`;
    return Number(rows[0]?.n ?? 0);
  }
}

const STATUS_COUNTER: Record<TaskStatus, Prisma.Sql> = {
  QUEUED: Prisma.sql`tasks_queued`,
  RUNNING: Prisma.sql`tasks_running`,
  COMPLETED: Prisma.sql`tasks_completed`,
  FAILED: Prisma.sql`tasks_failed`,
  CANCELLED: Prisma.sql`tasks_cancelled`,
  TIMEOUT: Prisma.sql`tasks_timeout`,
};
const ALL_TASKS = Prisma.sql`tasks_queued + tasks_running + tasks_completed + tasks_failed + tasks_cancelled + tasks_timeout`;

export function toDetail(row: TaskRow): TaskDetail {
  const usage =
    row.total_tokens === null
      ? null
      : {
          inputTokens: row.input_tokens ?? 0,
          outputTokens: row.output_tokens ?? 0,
          totalTokens: row.total_tokens,
          costUsd: row.cost_usd ?? 0,
        };
  return {
    taskId: row.id,
    userId: row.user_id,
    sessionId: row.session_id,
    query: row.query,
    status: row.status,
    mode: row.mode,
    requestedMode: row.requested_mode,
    result: row.result,
    error: row.error,
    errorType: row.error_type,
    modelUsed: row.model_used,
    provider: row.provider,
    usage,
    createdAt: row.created_at.toISOString(),
    updatedAt: row.updated_at.toISOString(),
    startedAt: row.started_at?.toISOString() ?? null,
    completedAt: row.completed_at?.toISOString() ?? null,
  };
}
