import { defineRoute, errorResponse, firstRuleMessage } from "@tog/edge";
import {
  ApprovalDecisionBody,
  CancelTaskBody,
  ListTasksQuery,
  TaskEventsQuery,
  TaskIdParams,
  TimelineQuery,
} from "./request.schemas.ts";
import {
  ApprovalDecisionResultSchema,
  CancelAcceptedSchema,
  CancelConflictSchema,
  StreamSubmittedSchema,
  TaskDetailSchema,
  TaskEventsPageSchema,
  TaskListSchema,
  TaskSubmittedSchema,
  TimelineSchema,
} from "./response.schemas.ts";
import { SubmitTaskBody } from "./submit-request.schema.ts";

// The task operations (docs/api.md "Tasks" and "Approvals"): submit, submit-and-stream, list,
// detail, event history, timeline, cancel, and the approval decision, served by the gateway.

/** GET /tasks has its own per-minute budget, so polling does not eat the submit budget. */
export const TASK_LIST_RPM = 100;

const WORKFLOW_HEADER = { description: "The task id (= workflow id).", schema: { type: "string" as const } };
const SESSION_HEADER = {
  description:
    "The session as the client named it: the external id it sent (as sent when printable ASCII, else percent-encoded UTF-8), else the session UUID.",
  schema: { type: "string" as const },
};
const NOT_FOUND = {
  404: errorResponse("`Task not found`: unknown id, a malformed (non-UUID) id, or another user's task."),
};

const SUBMIT_DESCRIPTION = [
  "Queues the task and returns at once; execution continues asynchronously.",
  "400 texts: `Query is required` (missing, null or blank query); `Invalid request body: <detail>` (malformed JSON or not an object);",
  "`disable_ai cannot be combined with model controls (found: …)`; `Invalid mode: <v> (allowed: simple, standard, complex, supervisor)`;",
  "`Invalid model_tier: <v> (allowed: small, medium, large)` (also `context.model_tier`); `template and template_name name different templates; supply only one`;",
  "a wrong type of a recognized context key names the key (`context.history_window_size must be an integer from 1 to 1000`).",
  "A body that is not `application/json` → 415. `null` fields count as absent; unknown top-level fields are ignored.",
  "Stored context: every recognized key with its default, top-level model controls over the context's, `template_name` folded into `template`, free-form keys kept.",
].join(" ");

const SUBMIT_ERRORS = {
  403: errorResponse("`Forbidden`: the session belongs to another user."),
  404: errorResponse("`Session not found`: the session was deleted."),
  415: errorResponse("`Content-Type must be application/json`."),
  500: errorResponse("`Failed to submit task: internal error` (details only in the log)."),
  502: errorResponse("The orchestrator cannot be reached."),
  503: errorResponse(
    "Overloaded (the run queue is full, the gateway or the orchestrator works on all the requests it may, or the orchestrator did not answer within its deadline) or the idempotency store is down; with `Retry-After`.",
  ),
};

export const submitTaskRoute = defineRoute({
  method: "post",
  path: "/api/v1/tasks",
  summary: "Submit a task",
  description: SUBMIT_DESCRIPTION,
  tags: ["Tasks"],
  operationId: "submitTask",
  auth: "apiKey",
  rateLimited: true,
  idempotent: true,
  body: SubmitTaskBody,
  invalidMessage: firstRuleMessage,
  responses: {
    200: {
      description: "Queued.",
      schema: TaskSubmittedSchema,
      headers: { "X-Workflow-ID": WORKFLOW_HEADER, "X-Session-ID": SESSION_HEADER },
    },
    ...SUBMIT_ERRORS,
  },
});

export const submitTaskStreamRoute = defineRoute({
  method: "post",
  path: "/api/v1/tasks/stream",
  summary: "Submit a task and get its stream URL",
  description: `Same body and rules as POST /tasks; also accepts a bearer token. ${SUBMIT_DESCRIPTION}`,
  tags: ["Tasks"],
  operationId: "submitTaskStream",
  auth: "apiKeyOrBearer",
  rateLimited: true,
  idempotent: true,
  body: SubmitTaskBody,
  invalidMessage: firstRuleMessage,
  responses: {
    201: {
      description: "Queued; open `stream_url` for its events.",
      schema: StreamSubmittedSchema,
      headers: {
        "X-Workflow-ID": WORKFLOW_HEADER,
        "X-Session-ID": SESSION_HEADER,
        Location: { description: "`/api/v1/tasks/<task_id>`.", schema: { type: "string" } },
      },
    },
    ...SUBMIT_ERRORS,
  },
});

export const listTasksRoute = defineRoute({
  method: "get",
  path: "/api/v1/tasks",
  summary: "List your tasks, newest first",
  description:
    `Own rate-limit bucket of ${TASK_LIST_RPM} requests/min. 400 texts: \`Invalid limit parameter: must be an integer from 1 to 100\`, ` +
    "`Invalid offset parameter: must be an integer from 0 to 2147483647`, `Invalid status parameter: <v> (allowed: …)`. " +
    "An empty parameter value is the same as leaving it out.",
  tags: ["Tasks"],
  operationId: "listTasks",
  auth: "apiKey",
  rateLimited: true,
  query: ListTasksQuery,
  invalidMessage: firstRuleMessage,
  responses: {
    200: { description: "One page.", schema: TaskListSchema },
    500: errorResponse("`Failed to list tasks: internal error` (details only in the log)."),
  },
});

export const getTaskRoute = defineRoute({
  method: "get",
  path: "/api/v1/tasks/{id}",
  summary: "Task status and result",
  description:
    "`result`, `model_used`, `provider` and `usage` appear only once the task is COMPLETED; `response` only when `result` is a JSON object or array. " +
    "Another user's task answers 404, like an unknown one.",
  tags: ["Tasks"],
  operationId: "getTask",
  auth: "apiKey",
  rateLimited: true,
  params: TaskIdParams,
  responses: {
    200: { description: "The task.", schema: TaskDetailSchema, headers: { "X-Workflow-ID": WORKFLOW_HEADER } },
    ...NOT_FOUND,
    500: errorResponse("`Failed to get task status: internal error` (details only in the log)."),
  },
});

export const getTaskEventsRoute = defineRoute({
  method: "get",
  path: "/api/v1/tasks/{id}/events",
  summary: "Stored event history of a task",
  description:
    "Events exactly as emitted (LLM_PARTIAL included), oldest first. Page with `limit`/`offset`, or follow `next_after_seq` with `after_seq` " +
    "(stable while the task still runs). Once the task's status is final the history is complete: a read moments after the task finished waits (at most 1 s) until its terminal event is stored. 400 texts: `Invalid limit parameter: must be an integer from 1 to 200`, `Invalid offset parameter: …`, `Invalid after_seq parameter: …`.",
  tags: ["Tasks"],
  operationId: "getTaskEvents",
  auth: "apiKey",
  rateLimited: true,
  params: TaskIdParams,
  query: TaskEventsQuery,
  invalidMessage: firstRuleMessage,
  responses: { 200: { description: "One page of events.", schema: TaskEventsPageSchema }, ...NOT_FOUND },
});

export const getTaskTimelineRoute = defineRoute({
  method: "get",
  path: "/api/v1/tasks/{id}/timeline",
  summary: "Deterministic step timeline of a task",
  description:
    "Steps, approvals and signals of the durable run, ordered by start time then step key; `seq` is the 1-based position. " +
    "`include_payloads=true` adds each entry's payload.",
  tags: ["Tasks"],
  operationId: "getTaskTimeline",
  auth: "apiKey",
  rateLimited: true,
  params: TaskIdParams,
  query: TimelineQuery,
  invalidMessage: firstRuleMessage,
  responses: { 200: { description: "The timeline.", schema: TimelineSchema }, ...NOT_FOUND },
});

export const cancelTaskRoute = defineRoute({
  method: "post",
  path: "/api/v1/tasks/{id}/cancel",
  summary: "Cancel a queued or running task",
  description:
    "The body is optional (no Content-Type needed without one). 202 also for a repeated cancel of a task still stopping; " +
    "409 once the task is terminal, naming the state. Another user's task → 403 `Forbidden`.",
  tags: ["Tasks"],
  operationId: "cancelTask",
  auth: "apiKey",
  rateLimited: true,
  params: TaskIdParams,
  body: CancelTaskBody.optional(),
  invalidMessage: firstRuleMessage,
  responses: {
    202: { description: "Cancellation accepted.", schema: CancelAcceptedSchema },
    403: errorResponse("`Forbidden`: another user's task."),
    ...NOT_FOUND,
    409: { description: "The task is already terminal.", schema: CancelConflictSchema },
    415: errorResponse("`Content-Type must be application/json`."),
  },
});

export const decideApprovalRoute = defineRoute({
  method: "post",
  path: "/api/v1/approvals/decision",
  summary: "Approve or deny a pending approval",
  description:
    "`workflow_id`, `approval_id` (non-empty strings) and `approved` (boolean) are required; 400 texts name the field " +
    "(`approval_id is required`, `approved must be a boolean (true or false)`). `approved_by` defaults to the authenticated user's id. " +
    "A non-UUID `workflow_id` → 404 `Task not found`.",
  tags: ["Approvals"],
  operationId: "decideApproval",
  auth: "apiKey",
  rateLimited: true,
  body: ApprovalDecisionBody,
  invalidMessage: firstRuleMessage,
  responses: {
    200: { description: "Decision delivered to the workflow.", schema: ApprovalDecisionResultSchema },
    403: errorResponse("`Forbidden`: another user's task."),
    404: errorResponse("`Task not found` or `Approval not found`."),
    409: errorResponse("The approval was already decided or timed out."),
    415: errorResponse("`Content-Type must be application/json`."),
  },
});

/** In the order the document lists them. */
export const TASK_ROUTES = [
  submitTaskRoute,
  submitTaskStreamRoute,
  listTasksRoute,
  getTaskRoute,
  getTaskEventsRoute,
  getTaskTimelineRoute,
  cancelTaskRoute,
  decideApprovalRoute,
] as const;
