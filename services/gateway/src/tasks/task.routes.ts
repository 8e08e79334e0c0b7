import type { Request, RequestHandler, Response } from "express";
import type { z } from "zod";
import type { RequestPart } from "@tog/edge";
import type { TaskOrchestrator } from "@tog/proto";
import type { RouteContext, RouteModule } from "../app.ts";
import { registerApprovalRoutes } from "./approval.routes.ts";
import { requireJsonBody } from "./require-json.ts";
import { errorResponse } from "./route-docs.ts";
import { CancelTaskBody, ListTasksQuery, TaskEventsQuery, TaskIdParams, TimelineQuery } from "./request.schemas.ts";
import {
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
import { toSubmitCommand } from "./submission.ts";
import { eventsPageJson, toTaskDetailView, toTaskSummaryView, toTimelineView } from "./task-views.ts";
import { withFailureMessage } from "./internal-failure.ts";
import { firstIssueMessage, taskIdOrNotFound } from "./task-ids.ts";

// The task operations of the contract (4.1–4.8): submit, submit-and-stream, list, detail, event
// history, timeline, cancel, and (approval.routes.ts) the approval decision. Each route:
// auth → rate limit → [Content-Type check → idempotency] → validation → orchestrator call.
// Ownership is the orchestrator's: it answers NotFoundError for another user's task on reads and
// ForbiddenError on cancel/decide; the edge maps both.

export interface TaskRoutesOptions {
  orchestrator: TaskOrchestrator;
  /**
   * Idempotency-Key handling of the two submit routes, instead of the context's: one that keeps
   * serving while Redis is down, since the task row deduplicates durably. Default: the context's.
   */
  submitIdempotency?: RequestHandler;
}

/** GET /tasks has its own per-minute budget (contract §8), so polling does not eat the submit budget. */
export const TASK_LIST_RPM = 100;
const TASK_LIST_BUCKET = "task-list";

const WORKFLOW_HEADER = { description: "The task id (= workflow id).", schema: { type: "string" as const } };
const SESSION_HEADER = {
  description:
    "The session as the client named it: the external id it sent (as sent when printable ASCII, else percent-encoded UTF-8), else the session UUID.",
  schema: { type: "string" as const },
};
const NOT_FOUND = { 404: errorResponse("`Task not found`: unknown id, a malformed (non-UUID) id, or another user's task.") };

/**
 * A header carries visible ASCII only: an external session id is sent as is when it is printable
 * ASCII, else percent-encoded UTF-8 (documented in the OpenAPI header and docs/decisions.md).
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
export function sessionHeader(ref: string): string {
  return PRINTABLE_ASCII.test(ref) ? ref : encodeURIComponent(ref);
}

/** Invalid input is reported with the exact text of the first failed rule. */
const firstRuleMessage = (part: RequestPart, error: z.ZodError) => firstIssueMessage(error, part);

export function taskRoutes(options: TaskRoutesOptions): RouteModule {
  const { orchestrator } = options;
  return (ctx: RouteContext) => {
    const { router, docs, auth, limits } = ctx;
    const idempotency = options.submitIdempotency ?? ctx.idempotency;
    const userId = (req: Request) => req.principal!.userId;

    const submitDescription = [
      "Queues the task and returns at once; execution continues asynchronously.",
      "400 texts: `Query is required` (missing, null or blank query); `Invalid request body: <detail>` (malformed JSON or not an object);",
      "`disable_ai cannot be combined with model controls (found: …)`; `Invalid mode: <v> (allowed: simple, standard, complex, supervisor)`;",
      "`Invalid model_tier: <v> (allowed: small, medium, large)` (also `context.model_tier`); `template and template_name name different templates; supply only one`;",
      "a wrong type of a recognized context key names the key (`context.history_window_size must be an integer from 1 to 1000`).",
      "A body that is not `application/json` → 415. `null` fields count as absent; unknown top-level fields are ignored.",
      "Stored context: every recognized key with its default, top-level model controls over the context's, `template_name` folded into `template`, free-form keys kept.",
    ].join(" ");

    const sendSubmission = async (req: Request, res: Response, body: SubmitTaskBody, streaming: boolean) => {
      // With an Idempotency-Key the task row keeps the request's identity, so a repeat replays
      // even after Redis lost the cached response (docs/reliability.md "Idempotency").
      const command = { ...toSubmitCommand(userId(req), body, streaming), idempotency: req.idempotency };
      const submitted = await withFailureMessage("Failed to submit task", () => orchestrator.submitTask(command));
      if (submitted.replayed) {
        res.setHeader("X-Idempotency-Cached", "true");
        res.setHeader("X-Idempotency-Key", req.get("Idempotency-Key") ?? "");
      }
      res.setHeader("X-Workflow-ID", submitted.taskId);
      res.setHeader("X-Session-ID", sessionHeader(submitted.sessionRef));
      return submitted;
    };

    docs.route(
      router,
      {
        method: "post",
        path: "/api/v1/tasks",
        summary: "Submit a task",
        description: submitDescription,
        tags: ["Tasks"],
        operationId: "submitTask",
        auth: "apiKey",
        rateLimited: true,
        idempotent: true,
        body: SubmitTaskBody,
        middleware: [auth.require(), limits.middleware(), requireJsonBody, idempotency],
        invalidMessage: firstRuleMessage,
        responses: {
          200: {
            description: "Queued.",
            schema: TaskSubmittedSchema,
            headers: { "X-Workflow-ID": WORKFLOW_HEADER, "X-Session-ID": SESSION_HEADER },
          },
          403: errorResponse("`Forbidden`: the session belongs to another user."),
          404: errorResponse("`Session not found`: the session was deleted."),
          415: errorResponse("`Content-Type must be application/json`."),
          500: errorResponse("`Failed to submit task: internal error` (details only in the log)."),
          502: errorResponse("The orchestrator cannot be reached."),
          503: errorResponse("Overloaded (the run queue is full) or the idempotency store is down."),
        },
      },
      async (req, res, { body }) => {
        const submitted = await sendSubmission(req, res, body, false);
        res.status(200).json({
          task_id: submitted.taskId,
          status: "STATUS_CODE_OK",
          message: "Task submitted successfully",
          created_at: submitted.createdAt,
        } satisfies z.input<typeof TaskSubmittedSchema>);
      },
    );

    docs.route(
      router,
      {
        method: "post",
        path: "/api/v1/tasks/stream",
        summary: "Submit a task and get its stream URL",
        description: `Same body and rules as POST /tasks; also accepts a bearer token. ${submitDescription}`,
        tags: ["Tasks"],
        operationId: "submitTaskStream",
        auth: "apiKeyOrBearer",
        rateLimited: true,
        idempotent: true,
        body: SubmitTaskBody,
        middleware: [auth.require({ allowBearer: true }), limits.middleware(), requireJsonBody, idempotency],
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
          403: errorResponse("`Forbidden`: the session belongs to another user."),
          404: errorResponse("`Session not found`: the session was deleted."),
          415: errorResponse("`Content-Type must be application/json`."),
          500: errorResponse("`Failed to submit task: internal error` (details only in the log)."),
          502: errorResponse("The orchestrator cannot be reached."),
          503: errorResponse("Overloaded (the run queue is full) or the idempotency store is down."),
        },
      },
      async (req, res, { body }) => {
        const submitted = await sendSubmission(req, res, body, true);
        res.setHeader("Location", `/api/v1/tasks/${submitted.taskId}`);
        res.status(201).json({
          task_id: submitted.taskId,
          workflow_id: submitted.taskId,
          stream_url: `/api/v1/stream/sse?workflow_id=${encodeURIComponent(submitted.taskId)}`,
        } satisfies z.input<typeof StreamSubmittedSchema>);
      },
    );

    docs.route(
      router,
      {
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
        middleware: [auth.require(), limits.middleware({ rpm: TASK_LIST_RPM, bucket: TASK_LIST_BUCKET })],
        invalidMessage: firstRuleMessage,
        responses: {
          200: { description: "One page.", schema: TaskListSchema },
          500: errorResponse("`Failed to list tasks: internal error` (details only in the log)."),
        },
      },
      async (req, res, { query }) => {
        const page = await withFailureMessage("Failed to list tasks", () =>
          orchestrator.listTasks({
            userId: userId(req),
            limit: query.limit,
            offset: query.offset,
            status: query.status,
            sessionId: query.session_id,
          }),
        );
        res.json({ tasks: page.tasks.map(toTaskSummaryView), total_count: page.totalCount } satisfies z.input<typeof TaskListSchema>);
      },
    );

    docs.route(
      router,
      {
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
        middleware: [auth.require(), limits.middleware()],
        responses: {
          200: { description: "The task.", schema: TaskDetailSchema, headers: { "X-Workflow-ID": WORKFLOW_HEADER } },
          ...NOT_FOUND,
          500: errorResponse("`Failed to get task status: internal error` (details only in the log)."),
        },
      },
      async (req, res, { params }) => {
        const taskId = taskIdOrNotFound(params.id);
        const task = await withFailureMessage("Failed to get task status", () => orchestrator.getTask(userId(req), taskId));
        res.setHeader("X-Workflow-ID", task.taskId);
        res.json(toTaskDetailView(task));
      },
    );

    docs.route(
      router,
      {
        method: "get",
        path: "/api/v1/tasks/{id}/events",
        summary: "Stored event history of a task",
        description:
          "Events exactly as emitted (LLM_PARTIAL included), oldest first. Page with `limit`/`offset`, or follow `next_after_seq` with `after_seq` " +
          "(stable while the task still runs). 400 texts: `Invalid limit parameter: must be an integer from 1 to 200`, `Invalid offset parameter: …`, `Invalid after_seq parameter: …`.",
        tags: ["Tasks"],
        operationId: "getTaskEvents",
        auth: "apiKey",
        rateLimited: true,
        params: TaskIdParams,
        query: TaskEventsQuery,
        middleware: [auth.require(), limits.middleware()],
        invalidMessage: firstRuleMessage,
        responses: { 200: { description: "One page of events.", schema: TaskEventsPageSchema }, ...NOT_FOUND },
      },
      async (req, res, { params, query }) => {
        const taskId = taskIdOrNotFound(params.id);
        const page = await orchestrator.getTaskEvents({
          userId: userId(req),
          taskId,
          limit: query.limit,
          offset: query.offset,
          afterSeq: query.after_seq,
        });
        res.type("application/json").send(eventsPageJson(taskId, page.events, page.totalCount));
      },
    );

    docs.route(
      router,
      {
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
        middleware: [auth.require(), limits.middleware()],
        invalidMessage: firstRuleMessage,
        responses: { 200: { description: "The timeline.", schema: TimelineSchema }, ...NOT_FOUND },
      },
      async (req, res, { params, query }) => {
        const includePayloads = query.include_payloads ?? false;
        const timeline = await orchestrator.getTimeline({ userId: userId(req), taskId: taskIdOrNotFound(params.id), includePayloads });
        res.json(toTimelineView(timeline, includePayloads));
      },
    );

    docs.route(
      router,
      {
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
        middleware: [auth.require(), limits.middleware(), requireJsonBody],
        invalidMessage: firstRuleMessage,
        responses: {
          202: { description: "Cancellation accepted.", schema: CancelAcceptedSchema },
          403: errorResponse("`Forbidden`: another user's task."),
          ...NOT_FOUND,
          409: { description: "The task is already terminal.", schema: CancelConflictSchema },
          415: errorResponse("`Content-Type must be application/json`."),
        },
      },
      async (req, res, { params, body }) => {
        const reason = body?.reason || undefined;
        const result = await orchestrator.cancelTask(userId(req), taskIdOrNotFound(params.id), reason);
        if (result.accepted) {
          res.status(202).json({ success: true, message: result.message || "Cancellation requested" } satisfies z.input<
            typeof CancelAcceptedSchema
          >);
        } else {
          res.status(409).json({
            success: false,
            message: `Task is already ${result.status}`,
            status: result.status,
          } satisfies z.input<typeof CancelConflictSchema>);
        }
      },
    );

    registerApprovalRoutes(ctx, { orchestrator });
  };
}
