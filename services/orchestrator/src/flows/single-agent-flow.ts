import type { FlowContext, WorkflowOutcome } from "../runtime/flow-context.ts";
import { runAgent } from "./agent.ts";
import type { FlowInput } from "./flow-input.ts";
import { systemPromptFor } from "./task-plan.ts";

// simple: one agent, one model call, no tools. standard: one agent with its role's tools, calling
// them until the model answers (at most settings.maxToolIterations rounds). The agent runs as
// child `agent` with the role's name as its agent id.

export async function runSingleAgent(
  ctx: FlowContext,
  input: FlowInput,
  mode: "simple" | "standard",
): Promise<WorkflowOutcome> {
  const { plan } = input;
  const r = await ctx.child("agent", plan.role.name, (agent) =>
    runAgent(agent, {
      role: plan.role,
      systemPrompt: systemPromptFor(plan, plan.role),
      task: plan.prompt,
      history: input.history,
      instruction: input.instruction,
      useTools: mode === "standard",
      selection: plan.selection,
    }),
  );
  return {
    result: r.result,
    modelUsed: r.model,
    provider: r.provider,
    usage: r.usage,
    agentsUsed: 1,
    toolsInvoked: r.toolsInvoked,
    mode: mode === "simple" ? "EXECUTION_MODE_SIMPLE" : "EXECUTION_MODE_STANDARD",
  };
}
