// The public HTTP API: every route's definition (schemas, descriptions, operation ids) and the
// OpenAPI document built from them. Services mount the definitions they serve; nothing here
// runs a request.
export {
  API_TAGS,
  API_VERSION,
  describeEventSchemas,
  PUBLIC_ROUTES,
  publicApiDocs,
  publicApiDocument,
} from "./document.ts";
export { describeValue } from "./describe-value.ts";
export {
  HealthSchema,
  healthRoute,
  NotReadySchema,
  openApiRoute,
  PROBE_PREFIXES,
  readinessRoute,
  ReadySchema,
  type ProbePrefix,
} from "./health.routes.ts";
export {
  AccessTokenRequestSchema,
  AccessTokenSchema,
  createAccessTokenRoute,
  TOKEN_MAX_TTL_SECONDS,
  TOKEN_MIN_TTL_SECONDS,
} from "./token.routes.ts";
export {
  cancelTaskRoute,
  decideApprovalRoute,
  getTaskEventsRoute,
  getTaskRoute,
  getTaskTimelineRoute,
  listTasksRoute,
  submitTaskRoute,
  submitTaskStreamRoute,
  TASK_LIST_RPM,
} from "./tasks/task.routes.ts";
export {
  ApprovalDecisionBody,
  CancelTaskBody,
  ListTasksQuery,
  parseStatusFilter,
  REASON_MAX_CHARS,
  TaskEventsQuery,
  TaskIdParams,
  TEXT_MAX_CHARS,
  TimelineQuery,
} from "./tasks/request.schemas.ts";
export {
  API_EXECUTION_MODES,
  API_TASK_STATUSES,
  ApprovalDecisionResultSchema,
  CancelAcceptedSchema,
  CancelConflictSchema,
  StreamSubmittedSchema,
  TaskDetailSchema,
  TaskEventSchema,
  TaskEventsPageSchema,
  TaskListSchema,
  TaskSubmittedSchema,
  TaskSummarySchema,
  TimelineEntrySchema,
  TimelineSchema,
} from "./tasks/response.schemas.ts";
export { QUERY_MAX_CHARS, SESSION_ID_MAX_CHARS, SubmitTaskBody } from "./tasks/submit-request.schema.ts";
export {
  MODEL_CONTROL_KEYS,
  MODEL_TIERS,
  NAME_MAX_CHARS,
  normalizeTaskContext,
  PROMPT_MAX_CHARS,
  RATIO_DEFAULTS,
  readTaskContext,
  TASK_CONTEXT_KEYS,
  TaskContextSchema,
  WINDOW_LIMITS,
  type ModelControls,
  type ModelTier,
  type ReadContext,
  type TaskContext,
  type TaskContextKey,
} from "./tasks/task-context.ts";
export {
  deleteSessionRoute,
  getSessionEventsRoute,
  getSessionHistoryRoute,
  getSessionRoute,
  listSessionsRoute,
  renameSessionRoute,
} from "./sessions/session.routes.ts";
export { MAX_OFFSET } from "./query-params.ts";
export {
  ListSessionsQuery,
  RenameSessionBody,
  SessionIdParams,
  TITLE_MAX_CHARS,
  TurnsQuery,
} from "./sessions/request.schemas.ts";
export {
  SessionDetailSchema,
  SessionHistorySchema,
  SessionHistoryTaskSchema,
  SessionListSchema,
  SessionRenamedSchema,
  SessionSummarySchema,
  TurnEventSchema,
  TurnSchema,
  TurnsSchema,
} from "./sessions/response.schemas.ts";
export { SSE_PATH, streamSseRoute, streamWsRoute, WS_PATH } from "./stream/stream.routes.ts";
