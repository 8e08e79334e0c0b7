import { ValidationError } from "@tog/core";
import { estimateComplexity, type ChatMessage } from "@tog/providers";
import { TaskFailure, pending, type TaskFlow, type FlowContext, type FlowOutcome } from "../runtime/flow-context.ts";
import { runComplex } from "./complex-flow.ts";
import type { FlowInput } from "./flow-input.ts";
import { runSingleAgent } from "./single-agent-flow.ts";
import { runSupervisor } from "./supervisor-flow.ts";
import { checkModelSelection, planTask, type TaskPlan } from "./task-plan.ts";
import { runTemplateOnly } from "./template-flow.ts";

// The entry of every task. Step `start` emits WORKFLOW_STARTED (seq 1). A spec the worker
// cannot run (unknown role/template, an override the router refuses) fails after it with
// INVALID_INPUT. Then: the task approval when require_approval is set (approval key `task`),
// the template-only path for disable_ai, the session history (step `history`), and the mode.

export const taskFlow: TaskFlow = async (ctx: FlowContext): Promise<FlowOutcome> => {
  const { spec } = ctx.task;
  let plan: TaskPlan | undefined;
  let invalid: string | undefined;
  try {
    plan = planTask(spec);
    if (!plan.disableAi) checkModelSelection(plan.selection, { catalog: ctx.catalog, llm: ctx.llm });
  } catch (err) {
    if (!(err instanceof ValidationError)) throw err;
    invalid = err.message;
  }

  // Lazy: written (and WORKFLOW_STARTED published) with the history and the agent's start before
  // the first live event goes out, or with the final write (docs/performance.md "Lazy steps").
  await ctx.step("start", { kind: "start", name: "workflow", lazy: true }, async () => ({
    output: { mode: plan?.mode ?? spec.mode ?? "simple" },
    events: [
      pending("WORKFLOW_STARTED", "Workflow started", {
        query: spec.query,
        mode: plan?.mode ?? spec.mode ?? "simple",
        session_id: ctx.task.sessionId,
        estimated_complexity: plan?.complexity ?? estimateComplexity(spec.query).complexity_score,
      }),
    ],
  }));
  if (!plan) throw new TaskFailure("INVALID_INPUT", invalid ?? "Invalid task");

  let instruction: string | undefined;
  if (spec.requireApproval) {
    const outcome = await ctx.requestApproval({
      key: "task",
      toolName: "agent",
      operation: "execute task",
      riskLevel: "medium",
      details: { query: spec.query, mode: plan.mode },
    });
    if (outcome.decision !== "approved") {
      throw outcome.decision === "denied"
        ? new TaskFailure(
            "APPROVAL_DENIED",
            `Task was denied by ${outcome.approvedBy}${outcome.comments ? `: ${outcome.comments}` : ""}`,
          )
        : new TaskFailure("APPROVAL_TIMEOUT", "Approval of the task timed out");
    }
    instruction = outcome.modifiedAction?.trim() || undefined;
  }

  if (plan.disableAi) return runTemplateOnly(ctx, plan);

  const input: FlowInput = { plan, history: await loadHistory(ctx), instruction };
  switch (plan.mode) {
    case "simple":
    case "standard":
      return runSingleAgent(ctx, input, plan.mode);
    case "complex":
      return runComplex(ctx, input);
    case "supervisor":
      return runSupervisor(ctx, input);
  }
};

/** Session history, checkpointed so a resumed run sees the turns the first attempt saw. */
async function loadHistory(ctx: FlowContext): Promise<ChatMessage[]> {
  return ctx.step("history", { kind: "plan", name: "session-history", lazy: true }, async () => {
    const messages = await ctx.loadSessionHistory();
    const n = messages.length;
    return {
      output: messages,
      events:
        n === 0
          ? []
          : [
              pending("DATA_PROCESSING", `Loaded ${n} earlier message${n === 1 ? "" : "s"} of the session`, {
                operation: "load_session_history",
                records_processed: n,
                total_records: n,
                processing_stage: "context",
              }),
            ],
    };
  });
}
