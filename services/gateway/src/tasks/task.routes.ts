import type { Request, RequestHandler, Response } from "express";
import type { z } from "zod";
import { mountRoute, requireJsonBody } from "@tog/edge";
import type { TaskOrchestrator } from "@tog/proto";
import {
  cancelTaskRoute,
  getTaskEventsRoute,
  getTaskRoute,
  getTaskTimelineRoute,
  listTasksRoute,
  submitTaskRoute,
  submitTaskStreamRoute,
  TASK_LIST_RPM,
  type CancelAcceptedSchema,
  type CancelConflictSchema,
  type StreamSubmittedSchema,
  type SubmitTaskBody,
  type TaskListSchema,
  type TaskSubmittedSchema,
} from "@tog/api";
import type { RouteContext, RouteModule } from "../app.ts";
import { registerApprovalRoutes } from "./approval.routes.ts";
import { toSubmitCommand } from "./submission.ts";
import { eventsPageJson, toTaskDetailView, toTaskSummaryView, toTimelineView } from "./task-views.ts";
import { withFailureMessage } from "./internal-failure.ts";
import { taskIdOrNotFound } from "./task-ids.ts";

// The task operations as libs/api defines them (docs/api.md "Tasks"): submit, submit-and-stream,
// list, detail, event history, timeline, cancel, and (approval.routes.ts) the approval decision.
// Each route: auth → rate limit → [Content-Type check → idempotency] → validation → orchestrator
// call. Ownership is the orchestrator's: it answers NotFoundError for another user's task on
// reads and ForbiddenError on cancel/decide; the edge maps both.

export interface TaskRoutesOptions {
  orchestrator: TaskOrchestrator;
  /**
   * Idempotency-Key handling of the two submit routes, instead of the context's: one that keeps
   * serving while Redis is down, since the task row deduplicates durably. Default: the context's.
   */
  submitIdempotency?: RequestHandler;
}

export { TASK_LIST_RPM };
const TASK_LIST_BUCKET = "task-list";

/**
 * A header carries visible ASCII only: an external session id is sent as is when it is printable
 * ASCII, else percent-encoded UTF-8 (documented in the OpenAPI header and docs/decisions.md).
 */
const PRINTABLE_ASCII = /^[\x20-\x7e]*$/;
export function sessionHeader(ref: string): string {
  return PRINTABLE_ASCII.test(ref) ? ref : encodeURIComponent(ref);
}

export function taskRoutes(options: TaskRoutesOptions): RouteModule {
  const { orchestrator } = options;
  return (ctx: RouteContext) => {
    const { router, auth, limits } = ctx;
    const idempotency = options.submitIdempotency ?? ctx.idempotency;
    const userId = (req: Request) => req.principal!.userId;

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

    mountRoute(
      router,
      { ...submitTaskRoute, middleware: [auth.require(), limits.middleware(), requireJsonBody, idempotency] },
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

    mountRoute(
      router,
      {
        ...submitTaskStreamRoute,
        middleware: [auth.require({ allowBearer: true }), limits.middleware(), requireJsonBody, idempotency],
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

    mountRoute(
      router,
      {
        ...listTasksRoute,
        middleware: [auth.require(), limits.middleware({ rpm: TASK_LIST_RPM, bucket: TASK_LIST_BUCKET })],
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
        res.json({ tasks: page.tasks.map(toTaskSummaryView), total_count: page.totalCount } satisfies z.input<
          typeof TaskListSchema
        >);
      },
    );

    mountRoute(
      router,
      { ...getTaskRoute, middleware: [auth.require(), limits.middleware()] },
      async (req, res, { params }) => {
        const taskId = taskIdOrNotFound(params.id);
        const task = await withFailureMessage("Failed to get task status", () =>
          orchestrator.getTask(userId(req), taskId),
        );
        res.setHeader("X-Workflow-ID", task.taskId);
        res.json(toTaskDetailView(task));
      },
    );

    mountRoute(
      router,
      { ...getTaskEventsRoute, middleware: [auth.require(), limits.middleware()] },
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

    mountRoute(
      router,
      { ...getTaskTimelineRoute, middleware: [auth.require(), limits.middleware()] },
      async (req, res, { params, query }) => {
        const includePayloads = query.include_payloads ?? false;
        const timeline = await orchestrator.getTimeline({
          userId: userId(req),
          taskId: taskIdOrNotFound(params.id),
          includePayloads,
        });
        res.json(toTimelineView(timeline, includePayloads));
      },
    );

    mountRoute(
      router,
      { ...cancelTaskRoute, middleware: [auth.require(), limits.middleware(), requireJsonBody] },
      async (req, res, { params, body }) => {
        const reason = body?.reason || undefined;
        const result = await orchestrator.cancelTask(userId(req), taskIdOrNotFound(params.id), reason);
        if (result.accepted) {
          res
            .status(202)
            .json({ success: true, message: result.message || "Cancellation requested" } satisfies z.input<
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
