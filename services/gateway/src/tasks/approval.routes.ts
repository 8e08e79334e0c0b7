import type { z } from "zod";
import type { TaskOrchestrator } from "@tog/proto";
import type { RouteContext } from "../app.ts";
import { requireJsonBody } from "./require-json.ts";
import { errorResponse } from "./route-docs.ts";
import { ApprovalDecisionBody } from "./request.schemas.ts";
import { ApprovalDecisionResultSchema } from "./response.schemas.ts";
import { firstIssueMessage, taskIdOrNotFound } from "./task-ids.ts";

// POST /approvals/decision (contract 4.8, 2.10): the decision is handed to the orchestrator,
// which persists it as the workflow's signal and wakes the worker. Unknown task or approval →
// 404, another user's task → 403, an approval already decided or timed out → 409.

export function registerApprovalRoutes(ctx: RouteContext, options: { orchestrator: TaskOrchestrator }): void {
  const { router, docs, auth, limits } = ctx;
  const { orchestrator } = options;

  docs.route(
    router,
    {
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
      middleware: [auth.require(), limits.middleware(), requireJsonBody],
      invalidMessage: (part, error) => firstIssueMessage(error, part),
      responses: {
        200: { description: "Decision delivered to the workflow.", schema: ApprovalDecisionResultSchema },
        403: errorResponse("`Forbidden`: another user's task."),
        404: errorResponse("`Task not found` or `Approval not found`."),
        409: errorResponse("The approval was already decided or timed out."),
        415: errorResponse("`Content-Type must be application/json`."),
      },
    },
    async (req, res, { body }) => {
      const principal = req.principal!;
      const result = await orchestrator.decideApproval({
        userId: principal.userId,
        workflowId: taskIdOrNotFound(body.workflow_id),
        approvalId: body.approval_id,
        approved: body.approved,
        feedback: body.feedback ?? undefined,
        modifiedAction: body.modified_action ?? undefined,
        runId: body.run_id ?? undefined,
        approvedBy: body.approved_by ?? principal.userId,
      });
      res.json({
        status: "sent",
        success: true,
        message: `Approval decision sent for approval ${result.approvalId}`,
        workflow_id: result.workflowId,
        run_id: result.runId || body.run_id || "",
        approval_id: result.approvalId,
      } satisfies z.input<typeof ApprovalDecisionResultSchema>);
    },
  );
}
