import type { components, operations } from "./generated/api.ts";

// Friendly names for the generated OpenAPI types (src/generated/api.ts). Every request and
// response type of the SDK comes from the gateway's OpenAPI document, and every event type from
// the one event map of libs/events (one schema per `type`).

export type Schemas = components["schemas"];

export type TaskSubmission = Schemas["TaskSubmission"];
export type TaskSubmitted = Schemas["TaskSubmitted"];
export type StreamSubmitted = Schemas["StreamSubmitted"];
export type TaskDetail = Schemas["TaskDetail"];
export type TaskSummary = Schemas["TaskSummary"];
export type TaskList = Schemas["TaskList"];
export type TaskEventsPage = Schemas["TaskEventsPage"];
/** An event as the history endpoint returns it. */
export type StoredEvent = Schemas["TaskEvent"];
export type Timeline = Schemas["Timeline"];
export type CancelAccepted = Schemas["CancelAccepted"];
export type CancelConflict = Schemas["CancelConflict"];
export type ApprovalDecisionRequest = Schemas["ApprovalDecisionRequest"];
export type ApprovalDecisionResult = Schemas["ApprovalDecisionResult"];
export type SessionList = Schemas["SessionList"];
export type SessionSummary = Schemas["SessionSummary"];
export type SessionDetail = Schemas["SessionDetail"];
export type SessionHistory = Schemas["SessionHistory"];
export type SessionTurns = Schemas["SessionTurns"];
export type SessionTurn = Schemas["SessionTurn"];
export type SessionRenamed = Schemas["SessionRenamed"];
export type Health = Schemas["Health"];
export type Ready = Schemas["Ready"];
export type AccessTokenRequest = Schemas["AccessTokenRequest"];
export type AccessToken = Schemas["AccessToken"];

/** One event of a task's stream (SSE `data:` / WebSocket message), discriminated by `type`. */
export type TogEvent = Schemas["StreamEvent"];
/** Every event type (the documented 26 plus AGENT_FAILED). */
export type EventType = TogEvent["type"];
/** The event of one type: `EventOf<"LLM_PARTIAL">["data"]["chunk"]` is a string. */
export type EventOf<T extends EventType> = Extract<TogEvent, { type: T }>;

/** Task status values (docs/api.md "Statuses and modes"). */
export type TaskStatus = TaskDetail["status"];
/** Status filter values of GET /tasks. */
export type TaskStatusFilter = NonNullable<NonNullable<operations["listTasks"]["parameters"]["query"]>["status"]>;
export type ExecutionMode = NonNullable<TaskSubmission["mode"]>;

export const TERMINAL_TASK_STATUSES: readonly string[] = [
  "TASK_STATUS_COMPLETED",
  "TASK_STATUS_FAILED",
  "TASK_STATUS_CANCELLED",
  "TASK_STATUS_TIMEOUT",
];

/** True when a task status is final. */
export function isTerminalStatus(status: string): boolean {
  return TERMINAL_TASK_STATUSES.includes(status);
}

/**
 * True for the event that ends a task's stream: WORKFLOW_COMPLETED, or ERROR_OCCURRED with
 * `data.terminal` (the rule of libs/events terminal.ts).
 */
export function isTerminalEvent(event: { type: string; data?: unknown }): boolean {
  if (event.type === "WORKFLOW_COMPLETED") return true;
  return event.type === "ERROR_OCCURRED" && (event.data as { terminal?: unknown } | undefined)?.terminal === true;
}
