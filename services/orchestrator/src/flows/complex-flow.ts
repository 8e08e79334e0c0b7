import { pending, type FlowContext, type WorkflowOutcome } from "../runtime/flow-context.ts";
import { runAgent, type AgentResult } from "./agent.ts";
import { dependencyContext, runDag, subtaskFailure } from "./dag.ts";
import type { FlowInput } from "./flow-input.ts";
import { planSubtasks, synthesize } from "./planning.ts";
import { systemPromptFor } from "./task-plan.ts";
import { addUsage } from "./usage.ts";

// complex: a decomposition call plans subtasks with dependencies; each subtask is a standard
// agent in its own child workflow (`subtask:<id>`, agent id `agent-<id>`), started as soon as
// its dependencies are done, independent ones in parallel; then a synthesis call combines the
// results (skipped for a one-subtask plan). Workflow-level events (DEPENDENCY_SATISFIED,
// PROGRESS, DATA_PROCESSING, the planner's and synthesizer's LLM events) come from the
// orchestrator. DEPENDENCY_SATISFIED is committed with the subtask's AGENT_STARTED and PROGRESS
// with its AGENT_COMPLETED, so a replay never repeats them.

export async function runComplex(ctx: FlowContext, input: FlowInput): Promise<WorkflowOutcome> {
  const { plan } = input;
  const orchestrator = ctx.agentId;
  const { subtasks, turn: planTurn } = await planSubtasks(ctx, plan, { key: "plan", agentId: orchestrator });
  const finished = new Set<string>();

  let results: Map<string, AgentResult>;
  try {
    results = await runDag(subtasks, (subtask, done) =>
      ctx.child(`subtask:${subtask.id}`, `agent-${subtask.id}`, (agent) =>
        runAgent(
          agent,
          {
            role: plan.role,
            systemPrompt: systemPromptFor(plan, plan.role),
            task: subtask.description,
            context: dependencyContext(subtask, subtasks, done),
            history: input.history,
            instruction: input.instruction,
            useTools: true,
            selection: plan.selection,
          },
          {
            startEvents: () =>
              subtask.dependencies.length === 0
                ? []
                : [
                    pending(
                      "DEPENDENCY_SATISFIED",
                      `Dependencies of ${subtask.id} are done`,
                      { subtask_id: subtask.id, satisfied_dependencies: subtask.dependencies, can_proceed: true },
                      orchestrator,
                    ),
                  ],
            finishEvents: () => {
              for (const id of done.keys()) finished.add(id);
              finished.add(subtask.id);
              return [
                pending(
                  "PROGRESS",
                  `${finished.size} of ${subtasks.length} subtasks done`,
                  {
                    percentage: Math.round((finished.size / subtasks.length) * 100),
                    current_step: finished.size,
                    total_steps: subtasks.length,
                    current_task: subtask.description,
                  },
                  orchestrator,
                ),
              ];
            },
          },
        ),
      ),
    );
  } catch (err) {
    throw subtaskFailure(ctx.signal, err);
  }

  const agents = subtasks.map((s) => results.get(s.id) as AgentResult);
  const usage = addUsage(planTurn.usage, ...agents.map((a) => a.usage));
  const toolsInvoked = agents.reduce((n, a) => n + a.toolsInvoked, 0);
  const only = agents.length === 1 ? agents[0] : undefined;
  if (only) {
    return {
      result: only.result,
      modelUsed: only.model,
      provider: only.provider,
      usage,
      agentsUsed: 1,
      toolsInvoked,
      mode: "EXECUTION_MODE_COMPLEX",
    };
  }
  const final = await synthesize(
    ctx,
    plan,
    subtasks.map((s, i) => ({ id: s.id, description: s.description, result: agents[i]?.result ?? "" })),
    {
      key: "synthesis",
      agentId: orchestrator,
      instruction: input.instruction,
      preamble: [
        pending(
          "DATA_PROCESSING",
          `Aggregating ${agents.length} subtask results`,
          {
            operation: "aggregate_results",
            records_processed: agents.length,
            total_records: subtasks.length,
            processing_stage: "synthesis",
          },
          orchestrator,
        ),
      ],
    },
  );
  return {
    result: final.text,
    modelUsed: final.model,
    provider: final.provider,
    usage: addUsage(usage, final.usage),
    agentsUsed: agents.length,
    toolsInvoked,
    mode: "EXECUTION_MODE_COMPLEX",
  };
}
