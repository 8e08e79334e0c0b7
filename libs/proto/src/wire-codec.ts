// Translation between the transport-free DTOs (task-orchestrator.ts) and the protobuf
// messages (generated/). Requests are encoded by the client and decoded by the server;
// responses the other way round. A malformed request is the caller's fault
// (ValidationError → INVALID_ARGUMENT); a malformed response is a broken orchestrator
// (an internal error on the gateway, never shown to HTTP clients).
import { AppError, ValidationError } from "@tog/core";
import type { ApprovalDecision__Output } from "./generated/tog/orchestrator/v1/ApprovalDecision.ts";
import type {
  CancelTaskRequest,
  CancelTaskRequest__Output,
} from "./generated/tog/orchestrator/v1/CancelTaskRequest.ts";
import type {
  CancelTaskResponse,
  CancelTaskResponse__Output,
} from "./generated/tog/orchestrator/v1/CancelTaskResponse.ts";
import type {
  DecideApprovalRequest,
  DecideApprovalRequest__Output,
} from "./generated/tog/orchestrator/v1/DecideApprovalRequest.ts";
import type {
  DecideApprovalResponse,
  DecideApprovalResponse__Output,
} from "./generated/tog/orchestrator/v1/DecideApprovalResponse.ts";
import type { ExecutionMode__Output } from "./generated/tog/orchestrator/v1/ExecutionMode.ts";
import type {
  GetTaskEventsRequest,
  GetTaskEventsRequest__Output,
} from "./generated/tog/orchestrator/v1/GetTaskEventsRequest.ts";
import type {
  GetTaskEventsResponse,
  GetTaskEventsResponse__Output,
} from "./generated/tog/orchestrator/v1/GetTaskEventsResponse.ts";
import type { GetTaskRequest, GetTaskRequest__Output } from "./generated/tog/orchestrator/v1/GetTaskRequest.ts";
import type {
  GetTimelineRequest,
  GetTimelineRequest__Output,
} from "./generated/tog/orchestrator/v1/GetTimelineRequest.ts";
import type {
  GetTimelineResponse,
  GetTimelineResponse__Output,
} from "./generated/tog/orchestrator/v1/GetTimelineResponse.ts";
import type { ListTasksRequest, ListTasksRequest__Output } from "./generated/tog/orchestrator/v1/ListTasksRequest.ts";
import type {
  ListTasksResponse,
  ListTasksResponse__Output,
} from "./generated/tog/orchestrator/v1/ListTasksResponse.ts";
import type { RequestMode__Output } from "./generated/tog/orchestrator/v1/RequestMode.ts";
import type {
  SubmitTaskRequest,
  SubmitTaskRequest__Output,
} from "./generated/tog/orchestrator/v1/SubmitTaskRequest.ts";
import type {
  SubmitTaskResponse,
  SubmitTaskResponse__Output,
} from "./generated/tog/orchestrator/v1/SubmitTaskResponse.ts";
import type { TaskDetail as TaskDetailWire, TaskDetail__Output } from "./generated/tog/orchestrator/v1/TaskDetail.ts";
import type { TaskStatus__Output } from "./generated/tog/orchestrator/v1/TaskStatus.ts";
import type {
  TimelineEntry as TimelineEntryWire,
  TimelineEntry__Output,
} from "./generated/tog/orchestrator/v1/TimelineEntry.ts";
import {
  REQUEST_MODES,
  TASK_STATUSES,
  type ApprovalDecisionCommand,
  type ApprovalDecisionResult,
  type CancelTaskResult,
  type ExecutionMode,
  type ListTasksQuery,
  type ListTasksResult,
  type RequestMode,
  type SubmitTaskCommand,
  type SubmitTaskResult,
  type TaskDetail,
  type TaskEventsQuery,
  type TaskEventsResult,
  type TaskStatus,
  type TimelineEntry,
  type TimelineQuery,
  type TimelineResult,
} from "./task-orchestrator.ts";

/**
 * Every field of a message spelled out (value may be undefined = unset), so adding a field
 * to the .proto breaks the build here until it is mapped. The `_field` keys are the
 * virtual oneof markers of proto3 `optional` fields, set by the decoder only.
 */
type Complete<T> = { [K in Exclude<keyof T, `_${string}`>]: T[K] | undefined };

type Side = "request" | "response";

function invalid(side: Side, message: string): AppError {
  return side === "request"
    ? new ValidationError(message)
    : new AppError("INTERNAL", "Internal server error", {
        cause: new Error(`Invalid orchestrator response: ${message}`),
      });
}

// --- enums -------------------------------------------------------------------------------

const STATUS_PREFIX = "TASK_STATUS_";
const REQUEST_MODE_PREFIX = "REQUEST_MODE_";

const statusToWire = (status: TaskStatus) => `${STATUS_PREFIX}${status}` as const;

function statusFromWire(value: TaskStatus__Output, side: Side, field: string): TaskStatus | undefined {
  if (value === "TASK_STATUS_UNSPECIFIED") return undefined;
  const status = value.slice(STATUS_PREFIX.length);
  if (!(TASK_STATUSES as readonly string[]).includes(status)) throw invalid(side, `${field}: unknown status ${value}`);
  return status as TaskStatus;
}

function requiredStatus(value: TaskStatus__Output, side: Side, field: string): TaskStatus {
  const status = statusFromWire(value, side, field);
  if (status === undefined) throw invalid(side, `${field}: status missing`);
  return status;
}

const requestModeToWire = (mode: RequestMode | null | undefined) =>
  mode
    ? (`${REQUEST_MODE_PREFIX}${mode.toUpperCase() as Uppercase<RequestMode>}` as const)
    : ("REQUEST_MODE_UNSPECIFIED" as const);

function requestModeFromWire(value: RequestMode__Output, side: Side, field: string): RequestMode | undefined {
  if (value === "REQUEST_MODE_UNSPECIFIED") return undefined;
  const mode = value.slice(REQUEST_MODE_PREFIX.length).toLowerCase();
  if (!(REQUEST_MODES as readonly string[]).includes(mode)) throw invalid(side, `${field}: unknown mode ${value}`);
  return mode as RequestMode;
}

const executionModeToWire = (mode: ExecutionMode | null) => mode ?? ("EXECUTION_MODE_UNSPECIFIED" as const);

const executionModeFromWire = (value: ExecutionMode__Output): ExecutionMode | null =>
  value === "EXECUTION_MODE_UNSPECIFIED" ? null : value;

function decisionFromWire(value: ApprovalDecision__Output): ApprovalDecisionResult["decision"] {
  if (value === "APPROVAL_DECISION_APPROVED") return "approved";
  if (value === "APPROVAL_DECISION_DENIED") return "denied";
  throw invalid("response", "decision missing");
}

// --- JSON text -----------------------------------------------------------------------------

function parseJson(text: string, side: Side, field: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw invalid(side, `${field}: not valid JSON`);
  }
}

// --- SubmitTask ------------------------------------------------------------------------------

export function encodeSubmitTaskRequest(c: SubmitTaskCommand): Complete<SubmitTaskRequest> {
  return {
    user_id: c.userId,
    query: c.query,
    session_id: c.sessionId,
    mode: requestModeToWire(c.mode),
    context_json: JSON.stringify(c.context),
    streaming: c.streaming,
    idempotency_key: c.idempotency?.keyHash,
    idempotency_ttl_seconds: c.idempotency?.ttlSeconds ?? 0,
  };
}

export function decodeSubmitTaskRequest(r: SubmitTaskRequest__Output): SubmitTaskCommand {
  const context = parseJson(r.context_json, "request", "context_json");
  if (typeof context !== "object" || context === null || Array.isArray(context)) {
    throw invalid("request", "context_json: not a JSON object");
  }
  return {
    userId: r.user_id,
    query: r.query,
    sessionId: r.session_id,
    mode: requestModeFromWire(r.mode, "request", "mode"),
    context: context as Record<string, unknown>,
    streaming: r.streaming,
    idempotency:
      r.idempotency_key === undefined
        ? undefined
        : { keyHash: r.idempotency_key, ttlSeconds: Math.max(1, r.idempotency_ttl_seconds) },
  };
}

export function encodeSubmitTaskResponse(r: SubmitTaskResult): Complete<SubmitTaskResponse> {
  return {
    task_id: r.taskId,
    session_id: r.sessionId,
    session_ref: r.sessionRef,
    status: statusToWire(r.status),
    created_at: r.createdAt,
    replayed: r.replayed ?? false,
  };
}

export function decodeSubmitTaskResponse(r: SubmitTaskResponse__Output): SubmitTaskResult {
  return {
    taskId: r.task_id,
    sessionId: r.session_id,
    sessionRef: r.session_ref,
    status: requiredStatus(r.status, "response", "status"),
    createdAt: r.created_at,
    ...(r.replayed ? { replayed: true } : {}),
  };
}

// --- TaskDetail (GetTask, ListTasks) ------------------------------------------------------------

export function encodeTaskDetail(t: TaskDetail): Complete<TaskDetailWire> {
  return {
    task_id: t.taskId,
    user_id: t.userId,
    session_id: t.sessionId,
    query: t.query,
    status: statusToWire(t.status),
    mode: executionModeToWire(t.mode),
    requested_mode: requestModeToWire(t.requestedMode),
    result: t.result ?? undefined,
    error: t.error,
    error_type: t.errorType ?? undefined,
    model_used: t.modelUsed ?? undefined,
    provider: t.provider ?? undefined,
    usage: t.usage
      ? {
          input_tokens: t.usage.inputTokens,
          output_tokens: t.usage.outputTokens,
          total_tokens: t.usage.totalTokens,
          cost_usd: t.usage.costUsd,
        }
      : null,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    started_at: t.startedAt ?? undefined,
    completed_at: t.completedAt ?? undefined,
  };
}

export function decodeTaskDetail(t: TaskDetail__Output | null): TaskDetail {
  if (!t) throw invalid("response", "task missing");
  return {
    taskId: t.task_id,
    userId: t.user_id,
    sessionId: t.session_id,
    query: t.query,
    status: requiredStatus(t.status, "response", "task.status"),
    mode: executionModeFromWire(t.mode),
    requestedMode: requestModeFromWire(t.requested_mode, "response", "task.requested_mode") ?? null,
    result: t.result ?? null,
    error: t.error,
    errorType: t.error_type ?? null,
    modelUsed: t.model_used ?? null,
    provider: t.provider ?? null,
    usage: t.usage
      ? {
          inputTokens: t.usage.input_tokens,
          outputTokens: t.usage.output_tokens,
          totalTokens: t.usage.total_tokens,
          costUsd: t.usage.cost_usd,
        }
      : null,
    createdAt: t.created_at,
    updatedAt: t.updated_at,
    startedAt: t.started_at ?? null,
    completedAt: t.completed_at ?? null,
  };
}

export const encodeGetTaskRequest = (userId: string, taskId: string): Complete<GetTaskRequest> => ({
  user_id: userId,
  task_id: taskId,
});

export const decodeGetTaskRequest = (r: GetTaskRequest__Output) => ({ userId: r.user_id, taskId: r.task_id });

// --- ListTasks --------------------------------------------------------------------------------

export function encodeListTasksRequest(q: ListTasksQuery): Complete<ListTasksRequest> {
  return {
    user_id: q.userId,
    limit: q.limit,
    offset: q.offset,
    status: q.status ? statusToWire(q.status) : "TASK_STATUS_UNSPECIFIED",
    session_id: q.sessionId,
  };
}

export function decodeListTasksRequest(r: ListTasksRequest__Output): ListTasksQuery {
  return {
    userId: r.user_id,
    limit: r.limit,
    offset: r.offset,
    status: statusFromWire(r.status, "request", "status"),
    sessionId: r.session_id,
  };
}

export function encodeListTasksResponse(r: ListTasksResult): Complete<ListTasksResponse> {
  return { tasks: r.tasks.map(encodeTaskDetail), total_count: r.totalCount };
}

export function decodeListTasksResponse(r: ListTasksResponse__Output): ListTasksResult {
  return { tasks: r.tasks.map(decodeTaskDetail), totalCount: r.total_count };
}

// --- CancelTask -------------------------------------------------------------------------------

export const encodeCancelTaskRequest = (
  userId: string,
  taskId: string,
  reason: string | undefined,
): Complete<CancelTaskRequest> => ({ user_id: userId, task_id: taskId, reason });

export const decodeCancelTaskRequest = (r: CancelTaskRequest__Output) => ({
  userId: r.user_id,
  taskId: r.task_id,
  reason: r.reason,
});

export function encodeCancelTaskResponse(r: CancelTaskResult): Complete<CancelTaskResponse> {
  return { accepted: r.accepted, status: statusToWire(r.status), message: r.message };
}

export function decodeCancelTaskResponse(r: CancelTaskResponse__Output): CancelTaskResult {
  return { accepted: r.accepted, status: requiredStatus(r.status, "response", "status"), message: r.message };
}

// --- DecideApproval ----------------------------------------------------------------------------

export function encodeDecideApprovalRequest(c: ApprovalDecisionCommand): Complete<DecideApprovalRequest> {
  return {
    user_id: c.userId,
    task_id: c.taskId,
    approval_id: c.approvalId,
    approved: c.approved,
    feedback: c.feedback,
    modified_action: c.modifiedAction,
    run_id: c.runId,
    approved_by: c.approvedBy,
  };
}

export function decodeDecideApprovalRequest(r: DecideApprovalRequest__Output): ApprovalDecisionCommand {
  return {
    userId: r.user_id,
    taskId: r.task_id,
    approvalId: r.approval_id,
    approved: r.approved,
    feedback: r.feedback,
    modifiedAction: r.modified_action,
    runId: r.run_id,
    approvedBy: r.approved_by,
  };
}

export function encodeDecideApprovalResponse(r: ApprovalDecisionResult): Complete<DecideApprovalResponse> {
  return {
    task_id: r.taskId,
    approval_id: r.approvalId,
    run_id: r.runId,
    decision: r.decision === "approved" ? "APPROVAL_DECISION_APPROVED" : "APPROVAL_DECISION_DENIED",
  };
}

export function decodeDecideApprovalResponse(r: DecideApprovalResponse__Output): ApprovalDecisionResult {
  return {
    taskId: r.task_id,
    approvalId: r.approval_id,
    runId: r.run_id,
    decision: decisionFromWire(r.decision),
  };
}

// --- GetTaskEvents ----------------------------------------------------------------------------

export function encodeGetTaskEventsRequest(q: TaskEventsQuery): Complete<GetTaskEventsRequest> {
  return { user_id: q.userId, task_id: q.taskId, limit: q.limit, offset: q.offset, after_seq: q.afterSeq };
}

export function decodeGetTaskEventsRequest(r: GetTaskEventsRequest__Output): TaskEventsQuery {
  return { userId: r.user_id, taskId: r.task_id, limit: r.limit, offset: r.offset, afterSeq: r.after_seq };
}

export function encodeGetTaskEventsResponse(r: TaskEventsResult): Complete<GetTaskEventsResponse> {
  return { events_json: r.events, total_count: r.totalCount };
}

export function decodeGetTaskEventsResponse(r: GetTaskEventsResponse__Output): TaskEventsResult {
  return { events: r.events_json, totalCount: r.total_count };
}

// --- GetTimeline ------------------------------------------------------------------------------

export function encodeGetTimelineRequest(q: TimelineQuery): Complete<GetTimelineRequest> {
  return { user_id: q.userId, task_id: q.taskId, include_payloads: q.includePayloads };
}

export function decodeGetTimelineRequest(r: GetTimelineRequest__Output): TimelineQuery {
  return { userId: r.user_id, taskId: r.task_id, includePayloads: r.include_payloads };
}

function encodeTimelineEntry(e: TimelineEntry): Complete<TimelineEntryWire> {
  return {
    seq: e.seq,
    kind: e.kind,
    name: e.name,
    agent_id: e.agentId,
    status: e.status,
    started_at: e.startedAt,
    completed_at: e.completedAt ?? undefined,
    duration_ms: e.durationMs ?? undefined,
    parent: e.parent ?? undefined,
    // `payload: null` is a payload (JSON null); only an absent one stays absent.
    payload_json: e.payload === undefined ? undefined : JSON.stringify(e.payload),
  };
}

function decodeTimelineEntry(e: TimelineEntry__Output): TimelineEntry {
  const entry: TimelineEntry = {
    seq: e.seq,
    kind: e.kind,
    name: e.name,
    agentId: e.agent_id,
    status: e.status,
    startedAt: e.started_at,
    completedAt: e.completed_at ?? null,
    durationMs: e.duration_ms ?? null,
    parent: e.parent ?? null,
  };
  if (e.payload_json !== undefined) entry.payload = parseJson(e.payload_json, "response", "payload_json");
  return entry;
}

export function encodeGetTimelineResponse(r: TimelineResult): Complete<GetTimelineResponse> {
  return { task_id: r.taskId, status: statusToWire(r.status), entries: r.entries.map(encodeTimelineEntry) };
}

export function decodeGetTimelineResponse(r: GetTimelineResponse__Output): TimelineResult {
  return {
    taskId: r.task_id,
    status: requiredStatus(r.status, "response", "status"),
    entries: r.entries.map(decodeTimelineEntry),
  };
}
