import { Prisma, type Db } from "@tog/db";

// The session service's reads and writes of `sessions` and the session's tasks and events (the
// orchestrator's tables: docs/architecture.md "Tables"). Task status values are stored bare
// (COMPLETED); the views add the API's prefix. Raw throughout: the rows are read in the shape the
// views build from, and each statement says why it is not a Prisma model call.

export interface SessionRecord {
  id: string;
  userId: string;
  externalId: string | null;
  title: string | null;
  context: Record<string, unknown>;
  tokenBudget: number;
  tokensUsed: number;
  taskCount: number;
  totalCostUsd: number;
  createdAt: string;
  updatedAt: string;
  lastActivityAt: string;
  deletedAt: string | null;
  deletedBy: string | null;
  /** Views of it may be cached: writers hint its changes (`markViewsCached`). Not part of the API. */
  viewsCached: boolean;
}

export interface SessionTaskRecord {
  id: string;
  query: string;
  status: string;
  mode: string | null;
  requestedMode: string | null;
  result: string | null;
  error: string;
  errorType: string | null;
  modelUsed: string | null;
  provider: string | null;
  inputTokens: number | null;
  outputTokens: number | null;
  totalTokens: number | null;
  costUsd: number | null;
  createdAt: string;
  startedAt: string | null;
  completedAt: string | null;
  /** From the terminal WORKFLOW_COMPLETED event (checkpointed with the final status). */
  agentsUsed: number | null;
  toolsInvoked: number | null;
}

/** An event of a turn (LLM_PARTIAL never included). */
export interface TurnEventRecord {
  taskId: string;
  seq: number;
  type: string;
  agentId: string;
  message: string;
  timestamp: string;
  /** The LLM_OUTPUT's text (`data.output`); null for other types. */
  output: string | null;
  terminal: boolean;
  data?: unknown;
}

interface SessionRow {
  id: string;
  user_id: string;
  external_id: string | null;
  title: string | null;
  context: Record<string, unknown> | null;
  token_budget: number;
  tokens_used: number;
  task_count: number;
  total_cost_usd: number;
  created_at: Date;
  updated_at: Date;
  last_activity_at: Date;
  deleted_at: Date | null;
  deleted_by: string | null;
  views_cached: boolean;
}

const SESSION_COLUMNS = Prisma.sql`id::text, user_id::text, external_id, title, context, token_budget, tokens_used, task_count,
  total_cost_usd, created_at, updated_at, last_activity_at, deleted_at, deleted_by::text, views_cached`;

function toSession(r: SessionRow): SessionRecord {
  return {
    id: r.id,
    userId: r.user_id,
    externalId: r.external_id,
    title: r.title,
    context: r.context ?? {},
    tokenBudget: r.token_budget,
    tokensUsed: r.tokens_used,
    taskCount: r.task_count,
    totalCostUsd: r.total_cost_usd,
    createdAt: r.created_at.toISOString(),
    updatedAt: r.updated_at.toISOString(),
    lastActivityAt: r.last_activity_at.toISOString(),
    deletedAt: r.deleted_at?.toISOString() ?? null,
    deletedBy: r.deleted_by,
    viewsCached: r.views_cached,
  };
}

const iso = (d: Date | null) => d?.toISOString() ?? null;

export class SessionRepository {
  readonly #db: Db;

  constructor(options: { db: Db }) {
    this.#db = options.db;
  }

  async findById(id: string): Promise<SessionRecord | null> {
    // raw: by primary key on every session request, in the one row shape of these reads (docs/performance.md "Reads").
    const rows = await this.#db.$queryRaw<SessionRow[]>`SELECT ${SESSION_COLUMNS} FROM sessions WHERE id = ${id}::uuid`;
    return rows[0] ? toSession(rows[0]) : null;
  }

  /** External ids are per user (docs/security.md): the same id of another user is another session. */
  async findByExternalId(userId: string, externalId: string): Promise<SessionRecord | null> {
    // raw: the same row shape as findById, by the (user_id, external_id) unique index.
    const rows = await this.#db.$queryRaw<
      SessionRow[]
    >`SELECT ${SESSION_COLUMNS} FROM sessions WHERE user_id = ${userId}::uuid AND external_id = ${externalId}`;
    return rows[0] ? toSession(rows[0]) : null;
  }

  /** The user's sessions that are not deleted, most recent activity first. */
  async list(userId: string, limit: number, offset: number): Promise<{ sessions: SessionRecord[]; total: number }> {
    // The total comes from the per-user counters (migration 20261124000000_hot_paths), so it
    // costs the same whatever the user's history; a page past the end is not queried.
    const count = await this.#db.$queryRaw<{ n: bigint | null }[]>`
      SELECT sum(sessions_active)::bigint AS n FROM user_counters WHERE user_id = ${userId}::uuid`;
    const total = Number(count[0]?.n ?? 0);
    if (offset >= total) return { sessions: [], total };
    // raw: in index order whatever the statistics say (migration 20261124160000_list_plans;
    // docs/performance.md "Plans that do not depend on statistics").
    const rows = await this.#db.$queryRaw<SessionRow[]>`
      SELECT ${SESSION_COLUMNS} FROM sessions_page(${userId}::uuid, ${Math.min(limit, total - offset)}::int, ${offset}::int)`;
    return { sessions: rows.map(toSession), total };
  }

  /** Every task of the session, oldest first; `limit`/`offset` count tasks (turns). */
  async tasks(sessionId: string, page?: { limit: number; offset: number }): Promise<SessionTaskRecord[]> {
    // raw: through session_tasks_oldest (migration 20261124160000_list_plans) with the outcome read from the
    // finish step: its output, or the terminal event in the row of a step an earlier release wrote
    // (docs/performance.md "Each event's JSON once").
    const rows = await this.#db.$queryRaw<
      {
        id: string;
        query: string;
        status: string;
        mode: string | null;
        requested_mode: string | null;
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
        started_at: Date | null;
        completed_at: Date | null;
        outcome: { agents_used?: unknown; tools_invoked?: unknown } | null;
      }[]
    >`
      SELECT t.id::text, t.query, t.status, t.mode, t.requested_mode, t.result, t.error, t.error_type, t.model_used, t.provider,
             t.input_tokens, t.output_tokens, t.total_tokens, t.cost_usd, t.created_at, t.started_at, t.completed_at,
             (SELECT coalesce((s.events -> 0 -> 'data')::jsonb, s.output) FROM task_steps s WHERE s.task_id = t.id AND s.key = 'finish') AS outcome
      FROM session_tasks_oldest(${sessionId}::uuid, ${page?.limit ?? null}::int, ${page?.offset ?? 0}::int) t`;
    const int = (v: unknown) => (typeof v === "number" && Number.isInteger(v) ? v : null);
    return rows.map((r) => ({
      id: r.id,
      query: r.query,
      status: r.status,
      mode: r.mode,
      requestedMode: r.requested_mode,
      result: r.result,
      error: r.error,
      errorType: r.error_type,
      modelUsed: r.model_used,
      provider: r.provider,
      inputTokens: r.input_tokens,
      outputTokens: r.output_tokens,
      totalTokens: r.total_tokens,
      costUsd: r.cost_usd,
      createdAt: r.created_at.toISOString(),
      startedAt: iso(r.started_at),
      completedAt: iso(r.completed_at),
      agentsUsed: int(r.outcome?.agents_used),
      toolsInvoked: int(r.outcome?.tools_invoked),
    }));
  }

  /** The session's task count, kept on the session row at submit (no count of rows). */
  async countTasks(sessionId: string): Promise<number> {
    // raw: the same column the list's total reads, by primary key (docs/performance.md "Reads").
    const rows = await this.#db.$queryRaw<
      { n: number }[]
    >`SELECT task_count AS n FROM sessions WHERE id = ${sessionId}::uuid`;
    return Number(rows[0]?.n ?? 0);
  }

  /** Stored events of these tasks without LLM_PARTIAL, by task then seq. */
  async turnEvents(taskIds: readonly string[], includeData: boolean): Promise<TurnEventRecord[]> {
    if (taskIds.length === 0) return [];
    // raw: fields extracted from the stored JSON text in PostgreSQL, so the event bodies are not shipped whole.
    const rows = await this.#db.$queryRaw<
      {
        task_id: string;
        seq: number;
        type: string;
        agent_id: string;
        message: string | null;
        ts: string | null;
        timestamp: Date;
        output: string | null;
        terminal: boolean;
        data?: unknown;
      }[]
    >`
      SELECT task_id::text, seq, type, agent_id, event ->> 'message' AS message, event ->> 'timestamp' AS ts, "timestamp",
             CASE WHEN type = 'LLM_OUTPUT' THEN event -> 'data' ->> 'output' END AS output,
             (type = 'WORKFLOW_COMPLETED' OR (type = 'ERROR_OCCURRED' AND event -> 'data' ->> 'terminal' = 'true')) AS terminal
             ${includeData ? Prisma.sql`, event -> 'data' AS data` : Prisma.empty}
      FROM task_events
      WHERE task_id = ANY(${[...taskIds]}::uuid[]) AND type <> 'LLM_PARTIAL'
      ORDER BY task_id, seq`;
    return rows.map((r) => ({
      taskId: r.task_id,
      seq: r.seq,
      type: r.type,
      agentId: r.agent_id,
      message: r.message ?? "",
      timestamp: r.ts ?? r.timestamp.toISOString(),
      output: r.output,
      terminal: r.terminal,
      ...(includeData ? { data: r.data ?? {} } : {}),
    }));
  }

  /**
   * Marks the session as one whose views may be cached, and returns it as it is after the mark.
   * Writers that change a session under its row lock read the mark in the same statement and
   * send a cache hint only when it is set (docs/decisions.md "Sessions", Cache): the update waits
   * for such a writer's commit, so the returned row, and every read that follows, includes what
   * a writer that saw no mark changed. Null when the session is gone.
   */
  async markViewsCached(id: string): Promise<SessionRecord | null> {
    // raw: RETURNING the row in the shape of findById.
    const rows = await this.#db.$queryRaw<SessionRow[]>`
      UPDATE sessions SET views_cached = true WHERE id = ${id}::uuid RETURNING ${SESSION_COLUMNS}`;
    return rows[0] ? toSession(rows[0]) : null;
  }

  /** Sets the title (column and `context.title`); null when the session is gone or deleted. */
  async rename(id: string, title: string): Promise<SessionRecord | null> {
    // raw: jsonb_set on `context` and RETURNING in one statement, which Prisma's model API cannot do.
    const rows = await this.#db.$queryRaw<SessionRow[]>`
      UPDATE sessions SET title = ${title}, context = jsonb_set(context, '{title}', to_jsonb(${title}::text)), updated_at = now()
      WHERE id = ${id}::uuid AND deleted_at IS NULL
      RETURNING ${SESSION_COLUMNS}`;
    return rows[0] ? toSession(rows[0]) : null;
  }

  /** Soft delete; a second delete keeps the first `deleted_at`/`deleted_by`. */
  async softDelete(id: string, by: string): Promise<void> {
    // raw: deleted_at from the database clock, like every other timestamp of the row.
    await this.#db.$executeRaw`
      UPDATE sessions SET deleted_at = now(), deleted_by = ${by}::uuid, updated_at = now()
      WHERE id = ${id}::uuid AND deleted_at IS NULL`;
  }
}
