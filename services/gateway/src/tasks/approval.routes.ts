import type { z } from "zod";
import { mountRoute, requireJsonBody } from "@tog/edge";
import type { TaskOrchestrator } from "@tog/proto";
import { decideApprovalRoute, type ApprovalDecisionResultSchema } from "@tog/api";
import type { RouteContext } from "../app.ts";
import { taskIdOrNotFound } from "./task-ids.ts";

// POST /approvals/decision (docs/api.md "Approvals"): the decision is handed to the orchestrator,
// which persists it as the task's signal and wakes the worker. Unknown task or approval →
// 404, another user's task → 403, an approval already decided or timed out → 409.

export function registerApprovalRoutes(ctx: RouteContext, options: { orchestrator: TaskOrchestrator }): void {
  const { router, auth, limits } = ctx;
  const { orchestrator } = options;

  mountRoute(
    router,
    { ...decideApprovalRoute, middleware: [auth.require(), limits.middleware(), requireJsonBody] },
    async (req, res, { body }) => {
      const principal = req.principal!;
      const result = await orchestrator.decideApproval({
        userId: principal.userId,
        taskId: taskIdOrNotFound(body.workflow_id),
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
        workflow_id: result.taskId,
        run_id: result.runId || body.run_id || "",
        approval_id: result.approvalId,
      } satisfies z.input<typeof ApprovalDecisionResultSchema>);
    },
  );
}
