import type { z } from "zod";
import { apiTaskStatus, displayMode } from "@tog/proto";
import type {
  SessionDetailSchema,
  SessionHistorySchema,
  SessionHistoryTaskSchema,
  SessionRenamedSchema,
  SessionSummarySchema,
  TurnSchema,
  TurnsSchema,
} from "@tog/api";
import type { SessionRecord, SessionTaskRecord } from "@tog/task-data";
import type { TurnTask } from "./session.service.ts";

// How session records look over HTTP.

type ApiStatus = z.input<typeof SessionHistoryTaskSchema>["status"];
type ApiMode = z.input<typeof SessionHistoryTaskSchema>["mode"];

const DAY_MS = 86_400_000;

/** `TASK_STATUS_<X>`, as GET /tasks writes it. */
export const apiStatus = (status: string): ApiStatus => apiTaskStatus(status);

/** The mode as GET /tasks shows it. */
export const apiMode = (task: Pick<SessionTaskRecord, "mode" | "requestedMode">): ApiMode => displayMode(task);

export function toSessionSummary(s: SessionRecord): z.input<typeof SessionSummarySchema> {
  return {
    session_id: s.id,
    user_id: s.userId,
    external_id: s.externalId,
    title: s.title,
    task_count: s.taskCount,
    tokens_used: s.tokensUsed,
    token_budget: s.tokenBudget,
    total_cost_usd: s.totalCostUsd,
    created_at: s.createdAt,
    updated_at: s.updatedAt,
    last_activity_at: s.lastActivityAt,
  };
}

export function toSessionDetail(s: SessionRecord, retentionDays: number): z.input<typeof SessionDetailSchema> {
  return {
    ...toSessionSummary(s),
    context: s.context,
    tokens_remaining: Math.max(0, s.tokenBudget - s.tokensUsed),
    expires_at:
      retentionDays > 0 ? new Date(Date.parse(s.lastActivityAt) + retentionDays * DAY_MS).toISOString() : null,
  };
}

export function toRenamed(s: SessionRecord): z.input<typeof SessionRenamedSchema> {
  return { session_id: s.id, external_id: s.externalId, title: s.title ?? "", updated_at: s.updatedAt };
}

function durationMs(t: Pick<SessionTaskRecord, "startedAt" | "completedAt">): number | null {
  if (t.startedAt === null || t.completedAt === null) return null;
  return Math.max(0, Date.parse(t.completedAt) - Date.parse(t.startedAt));
}

export function toHistoryTask(t: SessionTaskRecord): z.input<typeof SessionHistoryTaskSchema> {
  return {
    task_id: t.id,
    workflow_id: t.id,
    query: t.query,
    status: apiStatus(t.status),
    mode: apiMode(t),
    result: t.status === "COMPLETED" ? t.result : null,
    error_message: t.error,
    error_type: t.errorType,
    model_used: t.modelUsed,
    provider: t.provider,
    total_tokens: t.totalTokens ?? 0,
    input_tokens: t.inputTokens ?? 0,
    output_tokens: t.outputTokens ?? 0,
    total_cost_usd: t.costUsd ?? 0,
    duration_ms: durationMs(t),
    agents_used: t.agentsUsed,
    tools_invoked: t.toolsInvoked,
    created_at: t.createdAt,
    started_at: t.startedAt,
    completed_at: t.completedAt,
  };
}

/** GET /sessions/{id}/history's body, oldest task first. */
export function historyBody(sessionId: string, tasks: SessionTaskRecord[]): string {
  return JSON.stringify({
    session_id: sessionId,
    tasks: tasks.map(toHistoryTask),
    total: tasks.length,
  } satisfies z.input<typeof SessionHistorySchema>);
}

/** GET /sessions/{id}/events' body: one page of turns. */
export function turnsBody(
  sessionId: string,
  page: { limit: number; offset: number },
  totalCount: number,
  tasks: TurnTask[],
): string {
  return JSON.stringify({
    session_id: sessionId,
    count: tasks.length,
    total_count: totalCount,
    limit: page.limit,
    offset: page.offset,
    turns: tasks.map((t, i) => toTurn(t, page.offset + i + 1)),
  } satisfies z.input<typeof TurnsSchema>);
}

/** `turn` = offset + 1-based position in the page. */
export function toTurn(t: TurnTask, turn: number): z.input<typeof TurnSchema> {
  const firstOutput = t.events.find((e) => e.type === "LLM_OUTPUT");
  const agents: string[] = [];
  for (const e of t.events) if (e.agentId !== "orchestrator" && !agents.includes(e.agentId)) agents.push(e.agentId);
  return {
    turn,
    task_id: t.id,
    user_query: t.query,
    final_output: t.result ? t.result : (firstOutput?.output ?? firstOutput?.message ?? ""),
    status: apiStatus(t.status),
    timestamp: t.createdAt,
    events: t.events.map((e) => ({
      workflow_id: e.taskId,
      type: e.type,
      agent_id: e.agentId,
      message: e.message,
      timestamp: e.timestamp,
      seq: e.seq,
      ...(e.data !== undefined ? { data: e.data as Record<string, unknown> } : {}),
    })),
    metadata: {
      tokens_used: t.totalTokens ?? 0,
      execution_time_ms: durationMs(t) ?? 0,
      agents_involved: agents,
    },
  };
}
