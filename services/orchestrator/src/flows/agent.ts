import type { ErrorType } from "@tog/events";
import { isAbortError, type ChatMessage, type ToolSpec } from "@tog/providers";
import { TaskFailure, pending, type PendingEvent, type FlowContext } from "../runtime/flow-context.ts";
import { callModel, candidates, type ModelTurn } from "./model-call.ts";
import type { RolePreset } from "./roles.ts";
import type { ModelSelection } from "./task-plan.ts";
import { runToolCall } from "./tool-call.ts";
import { addUsage, clip, elapsedMs, ZERO_USAGE, type UsageTotals } from "./usage.ts";

// One agent: AGENT_STARTED, then model calls (with tools offered when it has any) and the tool
// calls they ask for, until the model answers, then AGENT_COMPLETED. On a failure that ends it
// (LLM_ERROR, a denied approval...), AGENT_FAILED and the error is rethrown. Runs in its own
// context (`ctx.child`), so its step keys and agent id are its own.
//
// Steps: agent:start, llm:<i>, tool:<i>.<j>:<tool>, agent:finish | agent:failed.

export const AGENT_MAX_TOKENS = 8_192;

export interface AgentSpec {
  role: RolePreset;
  systemPrompt: string;
  /** The agent's assignment: the user message it answers. */
  task: string;
  /** Extra material before the task (results of earlier subtasks), as its own user message. */
  context?: string | undefined;
  history: readonly ChatMessage[];
  /** The approver's `modified_action` on the task approval, passed on as an instruction. */
  instruction?: string | undefined;
  /** False: one model call, no tools (simple mode). */
  useTools: boolean;
  selection: ModelSelection;
}

export interface AgentHooks {
  /** Committed with AGENT_STARTED, before it (DEPENDENCY_SATISFIED, DELEGATION...). */
  startEvents?: (() => PendingEvent[]) | undefined;
  /** Committed with AGENT_COMPLETED, after it (PROGRESS, TEAM_STATUS...). */
  finishEvents?: ((result: AgentResult) => PendingEvent[]) | undefined;
}

export interface AgentResult {
  agentId: string;
  result: string;
  usage: UsageTotals;
  toolsInvoked: number;
  /** The model (and its provider) that gave the final answer. */
  model: string;
  provider: string;
  durationMs: number;
}

export async function runAgent(ctx: FlowContext, spec: AgentSpec, hooks: AgentHooks = {}): Promise<AgentResult> {
  const toolNames = spec.useTools ? offeredTools(ctx, spec) : [];
  const started = await ctx.step("agent:start", { kind: "start", name: spec.role.name, lazy: true }, async () => ({
    output: { at: Date.now() },
    events: [
      ...(hooks.startEvents?.() ?? []),
      pending("AGENT_STARTED", `Agent ${ctx.agentId} (${spec.role.name}) started`, {
        role: spec.role.name,
        subtask: spec.task,
        tools_available: toolNames,
      }),
    ],
  }));
  try {
    const result = await loop(ctx, spec, toolNames);
    return await ctx.step("agent:finish", { kind: "finish", name: spec.role.name, lazy: true }, async () => {
      const done = { ...result, durationMs: elapsedMs(started.at) };
      return {
        output: done,
        events: [
          pending("AGENT_COMPLETED", `Agent ${ctx.agentId} completed`, {
            result: done.result,
            tokens_used: done.usage.totalTokens,
            cost_usd: done.usage.costUsd,
            duration_ms: done.durationMs,
          }),
          ...(hooks.finishEvents?.(done) ?? []),
        ],
      };
    });
  } catch (err) {
    if (ctx.signal.aborted || isAbortError(err)) throw err;
    const failure = err instanceof TaskFailure ? err : undefined;
    const error = (failure?.errorType ?? "INTERNAL_ERROR") as ErrorType;
    // An unexpected error's text stays in the log (the runtime's terminal event says "Internal error" too).
    const message = failure?.message ?? "Internal error";
    await ctx.step("agent:failed", { kind: "finish", name: "failed", lazy: true }, async () => ({
      output: { error },
      events: [
        pending("AGENT_FAILED", clip(`Agent ${ctx.agentId} failed: ${message}`, 300), {
          error,
          error_message: message,
          recoverable: false,
        }),
      ],
    }));
    throw err;
  }
}

/** Tools of the role that are registered, when a candidate model can call tools (else none). */
function offeredTools(ctx: FlowContext, spec: AgentSpec): string[] {
  if (ctx.settings.maxToolIterations <= 0 || candidates(ctx, spec.selection, true).length === 0) return [];
  return spec.role.tools.filter((name) => ctx.tools.get(name) !== undefined);
}

async function loop(
  ctx: FlowContext,
  spec: AgentSpec,
  toolNames: readonly string[],
): Promise<Omit<AgentResult, "durationMs">> {
  const definitions: ToolSpec[] = toolNames.length > 0 ? ctx.tools.definitionsForLlm(toolNames) : [];
  const allowed = new Set(toolNames);
  const messages: ChatMessage[] = [{ role: "system", content: spec.systemPrompt }, ...spec.history];
  if (spec.instruction)
    messages.push({ role: "system", content: `Instruction from the approver of this task: ${spec.instruction}` });
  if (spec.context) messages.push({ role: "user", content: spec.context });
  messages.push({ role: "user", content: spec.task });

  let usage: UsageTotals = { ...ZERO_USAGE };
  let toolsInvoked = 0;
  let toolResults = 0;
  for (let i = 0; ; i++) {
    const offer = definitions.length > 0 && i < ctx.settings.maxToolIterations ? definitions : undefined;
    const turn: ModelTurn = await callModel(ctx, spec.selection, {
      key: `llm:${i}`,
      messages: [...messages],
      tools: offer,
      maxTokens: AGENT_MAX_TOKENS,
      thinking: thinking(spec, i, offer !== undefined, toolResults),
    });
    usage = addUsage(usage, turn.usage);
    if (turn.toolCalls.length === 0 || offer === undefined) {
      return {
        agentId: ctx.agentId,
        result: turn.text,
        usage,
        toolsInvoked,
        model: turn.model,
        provider: turn.provider,
      };
    }
    messages.push({ role: "assistant", content: turn.text, tool_calls: turn.toolCalls });
    for (const [j, call] of turn.toolCalls.entries()) {
      const outcome = await runToolCall(ctx, {
        key: `tool:${i}.${j}:${call.name}`,
        approvalKey: `tool:${i}.${j}`,
        call,
        allowed,
      });
      if (outcome.invoked) toolsInvoked++;
      toolResults++;
      messages.push({ role: "tool", content: outcome.content, tool_call_id: call.id });
    }
  }
}

function thinking(spec: AgentSpec, iteration: number, tools: boolean, toolResults: number) {
  if (iteration > 0) {
    return {
      thought: `Reviewing ${toolResults} tool result${toolResults === 1 ? "" : "s"} for: ${clip(spec.task, 160)}`,
      next_action: tools ? "answer_or_call_tool" : "answer",
      confidence: 0.8,
    };
  }
  return {
    thought: tools ? `Working on: ${clip(spec.task, 160)} (a tool may help)` : `Working on: ${clip(spec.task, 160)}`,
    next_action: tools ? "answer_or_call_tool" : "answer",
    confidence: tools ? 0.7 : 0.8,
  };
}
