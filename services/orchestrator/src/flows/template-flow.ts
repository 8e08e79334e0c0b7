import type { FlowContext, WorkflowOutcome } from "../runtime/flow-context.ts";
import { pending } from "../runtime/flow-context.ts";
import type { TaskPlan } from "./task-plan.ts";
import { ZERO_USAGE } from "./usage.ts";

// disable_ai: the rendered template is the result; no model is called (model_used `template`,
// provider `none`, zero usage). One step, so the timeline shows the rendering.

export const TEMPLATE_MODEL = "template";
export const TEMPLATE_PROVIDER = "none";

export async function runTemplateOnly(ctx: FlowContext, plan: TaskPlan): Promise<WorkflowOutcome> {
  const template = plan.template;
  if (!template) throw new Error("runTemplateOnly needs a template (planTask guarantees one with disable_ai)");
  const out = await ctx.step(
    "template",
    { kind: "finish", name: `${template.name}@${template.version}` },
    async () => ({
      output: { result: template.text },
      events: [
        pending("DATA_PROCESSING", `Rendered template ${template.name}@${template.version}`, {
          operation: "render_template",
          records_processed: template.replaced,
          total_records: template.references,
          processing_stage: "template",
        }),
      ],
    }),
  );
  return {
    result: out.result,
    modelUsed: TEMPLATE_MODEL,
    provider: TEMPLATE_PROVIDER,
    usage: { ...ZERO_USAGE },
    agentsUsed: 0,
    toolsInvoked: 0,
    mode: "EXECUTION_MODE_SIMPLE",
  };
}
