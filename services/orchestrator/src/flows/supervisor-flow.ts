import { pending, type PendingEvent, type FlowContext, type WorkflowOutcome } from "../runtime/flow-context.ts";
import { runAgent, type AgentResult } from "./agent.ts";
import { SubtaskError, dependencyContext, runDag, subtaskFailure } from "./dag.ts";
import type { FlowInput } from "./flow-input.ts";
import { planSubtasks, synthesize, type Subtask } from "./planning.ts";
import { roleForSubtask, type RolePreset } from "./roles.ts";
import { systemPromptFor } from "./task-plan.ts";
import { addUsage, clip, elapsedMs } from "./usage.ts";

// supervisor: the supervisor agent (`supervisor`) plans subtasks, recruits one member per
// subtask with a role matching its words (else the request's role), delegates, and runs the
// members as child workflows (`member:<n>`, agent id `<role>-<n>`), in parallel as far as the
// dependencies allow. Each member's result comes back as a message and is written to the shared
// workspace (`results/<subtask id>`); then the team is retired and the supervisor synthesizes.
// Responses report it as EXECUTION_MODE_COMPLEX (3.2 has no supervisor value).

export const SUPERVISOR_AGENT_ID = "supervisor";
export const COORDINATION_MODE = "supervisor";
const MESSAGE_PREVIEW = 500;

interface Member {
  subtask: Subtask;
  role: RolePreset;
  agentId: string;
  tools: string[];
}

export async function runSupervisor(ctx: FlowContext, input: FlowInput): Promise<WorkflowOutcome> {
  const { plan } = input;
  const sup = SUPERVISOR_AGENT_ID;
  const { subtasks, turn: planTurn } = await planSubtasks(ctx, plan, { key: "plan", agentId: sup });
  const members: Member[] = subtasks.map((subtask, i) => {
    const role = roleForSubtask(subtask.description, plan.role);
    return {
      subtask,
      role,
      agentId: `${role.name}-${i + 1}`,
      tools: role.tools.filter((t) => ctx.tools.get(t) !== undefined),
    };
  });
  const size = members.length;

  const recruited = await ctx.step("team:recruit", { kind: "team", name: "recruit" }, async () => ({
    output: { at: Date.now() },
    events: [
      pending(
        "TEAM_RECRUITED",
        `Recruited a team of ${size}`,
        {
          team_size: size,
          agents: members.map((m) => ({
            agent_id: m.agentId,
            role: m.role.name,
            capabilities: [...m.role.capabilities],
          })),
        },
        sup,
      ),
      ...members.map((m) =>
        pending(
          "ROLE_ASSIGNED",
          `${m.agentId} is the team's ${m.role.name}`,
          { role: m.role.name, capabilities: [...m.role.capabilities], tools: m.tools },
          m.agentId,
        ),
      ),
      teamStatus(size, 0, 0),
    ],
  }));

  const launched = new Set<string>();
  const finished = new Set<string>();
  const dependedOn = new Set(subtasks.flatMap((s) => s.dependencies));
  let results: Map<string, AgentResult>;
  try {
    results = await runDag(subtasks, (subtask, done) => {
      const m = members.find((x) => x.subtask.id === subtask.id) as Member;
      launched.add(subtask.id);
      return ctx.child(`member:${subtask.id.replace(/^task-/, "")}`, m.agentId, (agent) =>
        runAgent(
          agent,
          {
            role: m.role,
            systemPrompt: systemPromptFor(plan, m.role),
            task: subtask.description,
            context: dependencyContext(subtask, subtasks, done),
            history: input.history,
            instruction: input.instruction,
            useTools: true,
            selection: plan.selection,
          },
          {
            startEvents: () => [
              ...(subtask.dependencies.length === 0
                ? []
                : [
                    pending(
                      "DEPENDENCY_SATISFIED",
                      `Dependencies of ${subtask.id} are done`,
                      { subtask_id: subtask.id, satisfied_dependencies: subtask.dependencies, can_proceed: true },
                      sup,
                    ),
                  ]),
              pending(
                "DELEGATION",
                `Delegated ${subtask.id} to ${m.agentId}`,
                {
                  to_agent: m.agentId,
                  task: subtask.description,
                  priority: dependedOn.has(subtask.id) ? "high" : "normal",
                },
                sup,
              ),
              pending(
                "MESSAGE_SENT",
                `Task assignment to ${m.agentId}`,
                { to: m.agentId, content: clip(subtask.description, MESSAGE_PREVIEW), message_type: "task_assignment" },
                sup,
              ),
              pending(
                "MESSAGE_RECEIVED",
                `Task assignment from ${sup}`,
                { from: sup, content: clip(subtask.description, MESSAGE_PREVIEW), acknowledged: true },
                m.agentId,
              ),
            ],
            finishEvents: (r) => {
              for (const id of done.keys()) finished.add(id);
              finished.add(subtask.id);
              const active = Math.max(0, launched.size - finished.size);
              return [
                pending(
                  "MESSAGE_SENT",
                  `Result of ${subtask.id} to ${sup}`,
                  { to: sup, content: clip(r.result, MESSAGE_PREVIEW), message_type: "task_result" },
                  m.agentId,
                ),
                pending(
                  "MESSAGE_RECEIVED",
                  `Result of ${subtask.id} from ${m.agentId}`,
                  { from: m.agentId, content: clip(r.result, MESSAGE_PREVIEW), acknowledged: true },
                  sup,
                ),
                pending(
                  "WORKSPACE_UPDATED",
                  `Workspace key "results/${subtask.id}" set`,
                  { key: `results/${subtask.id}`, value: r.result, action: "set" },
                  sup,
                ),
                teamStatus(size, active, finished.size),
                pending(
                  "PROGRESS",
                  `${finished.size} of ${size} delegated subtasks done`,
                  {
                    percentage: Math.round((finished.size / size) * 100),
                    current_step: finished.size,
                    total_steps: size,
                    current_task: subtask.description,
                  },
                  sup,
                ),
              ];
            },
          },
        ),
      );
    });
  } catch (err) {
    const completed = err instanceof SubtaskError ? ([...err.completed.values()] as AgentResult[]) : [];
    if (!ctx.signal.aborted)
      await retire(
        ctx,
        recruited.at,
        size,
        completed.length,
        completed,
        `${err instanceof SubtaskError ? err.subtask.id : "A member"} failed; the remaining work was abandoned`,
      );
    throw subtaskFailure(ctx.signal, err);
  }

  const agents = subtasks.map((s) => results.get(s.id) as AgentResult);
  await retire(ctx, recruited.at, size, size, agents, "All delegated subtasks completed");
  const usage = addUsage(planTurn.usage, ...agents.map((a) => a.usage));
  const toolsInvoked = agents.reduce((n, a) => n + a.toolsInvoked, 0);
  const only = agents.length === 1 ? agents[0] : undefined;
  if (only) {
    return {
      result: only.result,
      modelUsed: only.model,
      provider: only.provider,
      usage,
      agentsUsed: 2,
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
      agentId: sup,
      instruction: input.instruction,
      preamble: [
        pending(
          "DATA_PROCESSING",
          `Aggregating ${agents.length} workspace entries`,
          {
            operation: "aggregate_results",
            records_processed: agents.length,
            total_records: size,
            processing_stage: "synthesis",
          },
          sup,
        ),
      ],
    },
  );
  return {
    result: final.text,
    modelUsed: final.model,
    provider: final.provider,
    usage: addUsage(usage, final.usage),
    agentsUsed: size + 1,
    toolsInvoked,
    mode: "EXECUTION_MODE_COMPLEX",
  };
}

function teamStatus(size: number, active: number, completed: number): PendingEvent {
  return pending(
    "TEAM_STATUS",
    `${completed} of ${size} subtasks done, ${active} agent${active === 1 ? "" : "s"} active`,
    {
      active_agents: active,
      idle_agents: size - active,
      tasks_completed: completed,
      tasks_remaining: size - completed,
      coordination_mode: COORDINATION_MODE,
    },
    SUPERVISOR_AGENT_ID,
  );
}

async function retire(
  ctx: FlowContext,
  since: number,
  size: number,
  completed: number,
  agents: readonly AgentResult[],
  reason: string,
): Promise<void> {
  await ctx.step("team:retire", { kind: "team", name: "retire" }, async () => ({
    output: { completed },
    events: [
      pending(
        "TEAM_RETIRED",
        `Team retired: ${reason}`,
        {
          team_size: size,
          duration_ms: elapsedMs(since),
          total_tokens: agents.reduce((n, a) => n + a.usage.totalTokens, 0),
          reason,
        },
        SUPERVISOR_AGENT_ID,
      ),
    ],
  }));
}
