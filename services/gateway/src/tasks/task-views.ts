import type { z } from "zod";
import { apiTaskStatus, displayMode, type TaskDetail, type TaskStatus, type TimelineResult } from "@tog/proto";
import { isTerminalStatus } from "@tog/events";
import type { TaskDetailSchema, TaskSummarySchema, TimelineSchema } from "@tog/api";

// How orchestrator records look over HTTP (`TaskDetail`, `TaskSummary`, `Timeline`; docs/api.md "Statuses and modes").

export const apiStatus = (status: TaskStatus) => apiTaskStatus(status);
export { displayMode };

/** `result` parsed, when it is a JSON object or array (a bare string or number is not a "response"). */
export function parseResponse(result: string): Record<string, unknown> | unknown[] | undefined {
  const first = result.trimStart()[0];
  if (first !== "{" && first !== "[") return undefined;
  try {
    const parsed: unknown = JSON.parse(result);
    return typeof parsed === "object" && parsed !== null ? (parsed as Record<string, unknown> | unknown[]) : undefined;
  } catch {
    return undefined;
  }
}

/** GET /tasks/{id}: result, response, model_used, provider and usage only for a COMPLETED task. */
export function toTaskDetailView(task: TaskDetail): z.input<typeof TaskDetailSchema> {
  const completed = task.status === "COMPLETED";
  const response = completed && task.result !== null ? parseResponse(task.result) : undefined;
  return {
    task_id: task.taskId,
    status: apiStatus(task.status),
    ...(completed && task.result !== null ? { result: task.result } : {}),
    ...(response !== undefined ? { response } : {}),
    error: task.error ?? "",
    created_at: task.createdAt,
    updated_at: task.updatedAt,
    query: task.query,
    session_id: task.sessionId,
    mode: displayMode(task),
    ...(completed && task.modelUsed !== null ? { model_used: task.modelUsed } : {}),
    ...(completed && task.provider !== null ? { provider: task.provider } : {}),
    ...(completed && task.usage !== null
      ? {
          usage: {
            total_tokens: task.usage.totalTokens,
            input_tokens: task.usage.inputTokens,
            output_tokens: task.usage.outputTokens,
            estimated_cost: task.usage.costUsd,
          },
        }
      : {}),
  };
}

/** An item of GET /tasks. */
export function toTaskSummaryView(task: TaskDetail): z.input<typeof TaskSummarySchema> {
  return {
    task_id: task.taskId,
    query: task.query,
    status: apiStatus(task.status),
    mode: displayMode(task),
    created_at: task.createdAt,
    completed_at: isTerminalStatus(task.status) ? (task.completedAt ?? task.updatedAt) : null,
    total_token_usage:
      task.usage === null
        ? null
        : {
            total_tokens: task.usage.totalTokens,
            cost_usd: task.usage.costUsd,
            prompt_tokens: task.usage.inputTokens,
            completion_tokens: task.usage.outputTokens,
          },
  };
}

/**
 * GET /tasks/{id}/events body, built by concatenation: the stored events are already JSON text
 * and are written out untouched (no parse/re-serialize on this hot path). Only the last one is
 * parsed, for its seq.
 */
export function eventsPageJson(taskId: string, events: readonly string[], totalCount: number): string {
  const last = events.at(-1);
  const nextAfterSeq = last === undefined ? null : (JSON.parse(last) as { seq: number }).seq;
  return (
    `{"workflow_id":${JSON.stringify(taskId)},"events":[${events.join(",")}],` +
    `"count":${events.length},"total_count":${totalCount},"next_after_seq":${nextAfterSeq === null ? "null" : nextAfterSeq}}`
  );
}

export function toTimelineView(timeline: TimelineResult, includePayloads: boolean): z.input<typeof TimelineSchema> {
  const entries = timeline.entries;
  let durationMs: number | null = null;
  if (isTerminalStatus(timeline.status) && entries.length > 0) {
    let start = Infinity;
    let end = -Infinity;
    for (const e of entries) {
      start = Math.min(start, Date.parse(e.startedAt));
      end = Math.max(end, Date.parse(e.completedAt ?? e.startedAt));
    }
    if (Number.isFinite(start) && Number.isFinite(end)) durationMs = Math.max(0, end - start);
  }
  return {
    workflow_id: timeline.taskId,
    status: apiStatus(timeline.status),
    events: entries.map((e) => ({
      seq: e.seq,
      kind: e.kind,
      name: e.name,
      agent_id: e.agentId,
      status: e.status,
      started_at: e.startedAt,
      completed_at: e.completedAt,
      duration_ms: e.durationMs,
      parent: e.parent,
      ...(includePayloads ? { payload: e.payload ?? null } : {}),
    })),
    stats: { total: entries.length, duration_ms: durationMs },
  };
}
