// @tog/sdk: the public surface. Browser-safe (fetch, WebSocket, URL, AbortSignal, TextDecoderStream).
export { TogClient, Tasks, Sessions, Approvals } from "./client.ts";
export type {
  TogClientOptions,
  SubmitOptions,
  Submitted,
  ListTasksOptions,
  WaitOptions,
  CancelResult,
  DecisionInput,
  SubmittedStream,
} from "./client.ts";
export type { StreamOptions, StreamTransport, ReconnectInfo, WebSocketConstructor } from "./stream.ts";
export { sseEvents, wsEvents } from "./stream.ts";
export type { RequestOptions, TransportOptions, FetchLike } from "./transport.ts";
export { Transport } from "./transport.ts";
export {
  abortError,
  ApiError,
  apiErrorFor,
  BadGatewayError,
  BadRequestError,
  ConflictError,
  ConnectionError,
  ForbiddenError,
  isAbortError,
  NotFoundError,
  PayloadTooLargeError,
  RateLimitError,
  ServerError,
  ServiceUnavailableError,
  StreamError,
  TogError,
  UnauthorizedError,
  WaitTimeoutError,
} from "./errors.ts";
export {
  type ApprovalDecisionRequest,
  type ApprovalDecisionResult,
  type CancelAccepted,
  type CancelConflict,
  type EventOf,
  type EventType,
  type ExecutionMode,
  type Health,
  isTerminalEvent,
  isTerminalStatus,
  type Ready,
  type Schemas,
  type SessionDetail,
  type SessionHistory,
  type SessionList,
  type SessionRenamed,
  type SessionSummary,
  type SessionTurn,
  type SessionTurns,
  type StoredEvent,
  type StreamSubmitted,
  type TaskDetail,
  type TaskEventsPage,
  type TaskList,
  type TaskStatus,
  type TaskStatusFilter,
  type TaskSubmission,
  type TaskSubmitted,
  type TaskSummary,
  TERMINAL_TASK_STATUSES,
  type Timeline,
  type TogEvent,
} from "./types.ts";
export { backoffDelay, parseRetryAfter } from "./backoff.ts";
export { randomId } from "./ids.ts";
export type { components, operations, paths } from "./generated/api.ts";
