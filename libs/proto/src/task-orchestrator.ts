// The orchestrator as its callers see it, transport-free. The gRPC client (client.ts)
// implements it over the wire for the gateway; the orchestrator service implements it for real
// and serves it through server.ts. Methods throw the named errors of @tog/core:
// NotFoundError("Task not found"), ForbiddenError, ConflictError, ValidationError,
// UpstreamUnavailableError (orchestrator unreachable → 502), OverloadedError (→ 503).

export const TASK_STATUSES = ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];

export const REQUEST_MODES = ["simple", "standard", "complex", "supervisor"] as const;
export type RequestMode = (typeof REQUEST_MODES)[number];

/** Response form of the mode (docs/api.md "Statuses and modes"); supervisor runs report EXECUTION_MODE_COMPLEX. */
export type ExecutionMode = "EXECUTION_MODE_SIMPLE" | "EXECUTION_MODE_STANDARD" | "EXECUTION_MODE_COMPLEX";

export interface SubmitTaskCommand {
  userId: string;
  query: string;
  /** As the client sent it (UUID or external id); absent → a new session. */
  sessionId?: string | undefined;
  /** Absent → automatic detection. */
  mode?: RequestMode | undefined;
  /**
   * The normalized context: every recognized key with its default filled in, the effective
   * model controls (top level over context), and the free-form keys kept as they came.
   */
  context: Record<string, unknown>;
  /** Submitted through POST /tasks/stream. */
  streaming: boolean;
  /**
   * A request with an Idempotency-Key: its identity (sha256 hex, libs/edge idempotency.ts) and
   * how long a repeat replays. A repeat within the TTL returns the earlier task (`replayed`).
   */
  idempotency?: { keyHash: string; ttlSeconds: number } | undefined;
}

export interface SubmitTaskResult {
  taskId: string;
  /** Internal session UUID. */
  sessionId: string;
  /** The id the client used for the session (external id, or the UUID). */
  sessionRef: string;
  status: TaskStatus;
  createdAt: string;
  /** The earlier task of the same idempotency identity, not a new one. */
  replayed?: boolean;
}

export interface TaskUsage {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
}

export interface TaskDetail {
  taskId: string;
  userId: string;
  sessionId: string;
  query: string;
  status: TaskStatus;
  /** Null until the run has chosen it (queued tasks of automatic mode). */
  mode: ExecutionMode | null;
  requestedMode: RequestMode | null;
  result: string | null;
  error: string;
  errorType: string | null;
  modelUsed: string | null;
  provider: string | null;
  usage: TaskUsage | null;
  createdAt: string;
  updatedAt: string;
  startedAt: string | null;
  completedAt: string | null;
}

export interface ListTasksQuery {
  userId: string;
  limit: number;
  offset: number;
  status?: TaskStatus | undefined;
  /** UUID or external id. */
  sessionId?: string | undefined;
}

export interface ListTasksResult {
  tasks: TaskDetail[];
  totalCount: number;
}

export type CancelTaskResult =
  | { accepted: true; status: TaskStatus; message: string }
  | { accepted: false; status: TaskStatus; message: string };

export interface ApprovalDecisionCommand {
  userId: string;
  taskId: string;
  approvalId: string;
  approved: boolean;
  feedback?: string | undefined;
  modifiedAction?: string | undefined;
  runId?: string | undefined;
  approvedBy: string;
}

export interface ApprovalDecisionResult {
  taskId: string;
  approvalId: string;
  runId: string;
  decision: "approved" | "denied";
}

export interface TaskEventsQuery {
  userId: string;
  taskId: string;
  limit: number;
  offset: number;
  /** Seq cursor: only events with seq greater than this (combined with offset 0). */
  afterSeq?: number | undefined;
}

export interface TaskEventsResult {
  /** Each the exact JSON text of a stored event (6.1), in seq order. */
  events: string[];
  /** All stored events of the task. */
  totalCount: number;
}

export interface TimelineQuery {
  userId: string;
  taskId: string;
  includePayloads: boolean;
}

export interface TimelineEntry {
  seq: number;
  kind: string;
  name: string;
  agentId: string;
  status: string;
  startedAt: string;
  completedAt: string | null;
  durationMs: number | null;
  parent: string | null;
  payload?: unknown;
}

export interface TimelineResult {
  taskId: string;
  status: TaskStatus;
  entries: TimelineEntry[];
}

export interface TaskOrchestrator {
  submitTask(command: SubmitTaskCommand): Promise<SubmitTaskResult>;
  /** Owner-only: another user's task is NotFoundError("Task not found"). */
  getTask(userId: string, taskId: string): Promise<TaskDetail>;
  listTasks(query: ListTasksQuery): Promise<ListTasksResult>;
  /** Owner-only: another user's task is ForbiddenError. */
  cancelTask(userId: string, taskId: string, reason: string | undefined): Promise<CancelTaskResult>;
  decideApproval(command: ApprovalDecisionCommand): Promise<ApprovalDecisionResult>;
  getTaskEvents(query: TaskEventsQuery): Promise<TaskEventsResult>;
  getTimeline(query: TimelineQuery): Promise<TimelineResult>;
  /** For the readiness probe. */
  ping(): Promise<void>;
}

// How statuses and modes are written in HTTP responses (docs/api.md "Statuses and modes"), shared by every
// service that renders tasks so they read the same everywhere.

export const EXECUTION_MODES = ["EXECUTION_MODE_SIMPLE", "EXECUTION_MODE_STANDARD", "EXECUTION_MODE_COMPLEX"] as const;
export const API_TASK_STATUSES = [
  "TASK_STATUS_UNSPECIFIED",
  ...TASK_STATUSES.map((s) => `TASK_STATUS_${s}` as const),
] as const;
export type ApiTaskStatus = (typeof API_TASK_STATUSES)[number];

/** `TASK_STATUS_<X>`; an unknown value is `TASK_STATUS_UNSPECIFIED`. */
export function apiTaskStatus(status: string): ApiTaskStatus {
  return (TASK_STATUSES as readonly string[]).includes(status)
    ? (`TASK_STATUS_${status}` as ApiTaskStatus)
    : "TASK_STATUS_UNSPECIFIED";
}

/** Response form of a request mode; a supervisor run is reported as complex (3.2 has no supervisor value). */
export function executionModeOf(mode: string): ExecutionMode {
  if (mode === "simple") return "EXECUTION_MODE_SIMPLE";
  if (mode === "standard") return "EXECUTION_MODE_STANDARD";
  return "EXECUTION_MODE_COMPLEX";
}

/**
 * The mode shown for a task: the one its run chose; before that, the requested mode's response
 * form; an automatic-mode task not yet started shows EXECUTION_MODE_STANDARD (the contract has
 * no "unknown" mode, and standard is the general-purpose mode).
 */
export function displayMode(task: { mode: string | null; requestedMode: string | null }): ExecutionMode {
  if (task.mode && (EXECUTION_MODES as readonly string[]).includes(task.mode)) return task.mode as ExecutionMode;
  return task.requestedMode ? executionModeOf(task.requestedMode) : "EXECUTION_MODE_STANDARD";
}
