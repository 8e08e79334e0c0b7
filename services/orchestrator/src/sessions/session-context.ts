import { estimateTokens, type ChatMessage, type LlmRouter } from "@tog/providers";
import type { Catalog } from "@tog/catalog";
import type { TaskInfo, TaskSpec } from "../runtime/flow-context.ts";
import { budgetFailure, estimateMessages, type BudgetState, type SessionBudgets } from "./session-budget.ts";
import type { SessionMemory } from "./session-memory.ts";

// What the runtime's `loadSessionHistory` seam does in a worker: the session's shaped history
// for the agent, then the budget check of the first model call (history + prompt), so a task
// over budget fails right after WORKFLOW_STARTED, before any model call is announced.

export function sessionContextLoader(options: {
  memory: SessionMemory;
  budgets: SessionBudgets;
}): (task: TaskInfo) => Promise<ChatMessage[]> {
  const read = async (task: TaskInfo): Promise<{ messages: ChatMessage[]; state: BudgetState | null }> => {
    // The session's only task has no earlier turns, and the claim has read its budget: nothing
    // more to read (docs/performance.md "A session's only task"). task_count only grows and
    // counts this task.
    const known = task.session;
    if (known === null || (known !== undefined && known.taskCount <= 1))
      return { messages: [], state: known && { budget: known.tokenBudget, used: known.tokensUsed } };
    // One statement reads both.
    const { history, budget } = await options.memory.loadWithBudget(task);
    return { messages: history.messages, state: budget };
  };
  return async (task) => {
    const { messages, state } = await read(task);
    // The first model call reuses the budget state (SessionBudgets).
    options.budgets.remember(task, state);
    const failure = budgetFailure(state, estimateMessages(messages) + estimateTokens(task.spec.query));
    if (failure) throw failure;
    return messages;
  };
}

/**
 * The smallest context window among the models the router would try for the task (a fallback
 * may answer), else among the tier's enabled catalog models; `fallback` when none is known.
 */
export function contextWindowOf(
  llm: Pick<LlmRouter, "candidates">,
  catalog: Catalog,
  fallback = 8_192,
): (spec: TaskSpec) => number {
  return (spec) => {
    let models: readonly { contextWindow: number }[] = [];
    try {
      models = llm.candidates({
        tier: spec.modelTier,
        modelOverride: spec.modelOverride,
        providerOverride: spec.providerOverride,
      });
    } catch {
      models = catalog.models({ tier: spec.modelTier }).filter((m) => m.enabled);
    }
    return models.length > 0 ? Math.min(...models.map((m) => m.contextWindow)) : fallback;
  };
}
