import type { DbPool } from "@tog/db";
import { estimateTokens, type ChatMessage, type LlmRouter } from "@tog/providers";
import { readSessionBudget } from "./session.repository.ts";
import { TaskFailure, type TaskInfo } from "../runtime/flow-context.ts";

// The session's token budget (sessions.token_budget, SESSION_TOKEN_BUDGET for a new session,
// default 1,000,000): what all tasks of a session may use together. `tokens_used` grows when a
// task finishes. A task fails with BUDGET_EXCEEDED (ERROR_OCCURRED, terminal) when:
// - before its first model call (the `history` step): the budget is used up, or the estimated
//   input of that call (history + prompt, 4 characters per token) is more than what is left;
// - before any later model call: that call's estimated input is more than what is left after
//   the tokens this run has used so far.
// The output of a call cannot be known in advance, so the task that crosses the budget with its
// answers still completes (its usage is recorded); the session's next task is refused. Tasks
// running at the same time in one session each see only the finished tasks' usage (finished when
// the run read the state, which its next model call reuses for up to a second).

export interface BudgetState {
  budget: number;
  used: number;
}

export class SessionBudgets {
  readonly #pool: DbPool;
  readonly #maxAgeMs: number;
  readonly #recent = new Map<string, { at: number; state: Promise<BudgetState | null> }>();

  /**
   * On the pg pool. Within one run, a state read less than `maxAgeMs` ago is reused: the history
   * step reads it with the session memory (`remember`), and the first model call follows within
   * milliseconds when the machine is idle, hundreds under load (a second: measured, 32 % of
   * tasks missed 100 ms at saturation). Another task always reads afresh.
   */
  constructor(options: { pool: DbPool; maxAgeMs?: number }) {
    this.#pool = options.pool;
    this.#maxAgeMs = options.maxAgeMs ?? 1_000;
  }

  /** null when the session no longer exists (purged mid-run): nothing to enforce. */
  state(task: Pick<TaskInfo, "id" | "sessionId">): Promise<BudgetState | null> {
    const hit = this.#recent.get(task.id);
    if (hit && Date.now() - hit.at < this.#maxAgeMs) return hit.state;
    return this.#keep(task.id, this.#read(task.sessionId));
  }

  /** A state this run has just read by other means (the session memory's statement). */
  remember(task: Pick<TaskInfo, "id">, state: BudgetState | null): void {
    void this.#keep(task.id, Promise.resolve(state));
  }

  #keep(taskId: string, state: Promise<BudgetState | null>): Promise<BudgetState | null> {
    if (this.#recent.size >= 10_000) this.#recent.clear();
    this.#recent.set(taskId, { at: Date.now(), state });
    state.then(
      () =>
        setTimeout(() => {
          if (this.#recent.get(taskId)?.state === state) this.#recent.delete(taskId);
        }, this.#maxAgeMs).unref(),
      () => this.#recent.delete(taskId),
    );
    return state;
  }

  async #read(sessionId: string): Promise<BudgetState | null> {
    const row = await readSessionBudget(this.#pool, sessionId);
    return row ? { budget: row.token_budget, used: row.tokens_used } : null;
  }
}

/** The failure for a step needing `needed` tokens, or undefined when it fits. */
export function budgetFailure(state: BudgetState | null, needed: number, usedInRun = 0): TaskFailure | undefined {
  if (state === null) return undefined;
  const used = state.used + usedInRun;
  const left = state.budget - used;
  if (left <= 0) {
    return new TaskFailure("BUDGET_EXCEEDED", `Session token budget exceeded: ${used} of ${state.budget} tokens used`);
  }
  if (needed > left) {
    return new TaskFailure(
      "BUDGET_EXCEEDED",
      `Session token budget exceeded: this step needs about ${needed} tokens, ${left} of ${state.budget} are left`,
    );
  }
  return undefined;
}

export function estimateMessages(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += estimateTokens(m.content);
  return n;
}

/**
 * The router a run uses: refuses a model call (BUDGET_EXCEEDED) whose estimated input does not
 * fit what is left of the session's budget after this run's own usage so far. A run resumed
 * after a crash counts from 0 again (calls checkpointed by the earlier attempt are not re-made,
 * so they are not seen here); the session total is still checked.
 */
export function budgetedRouter(
  llm: LlmRouter,
  budgets: SessionBudgets,
  task: Pick<TaskInfo, "id" | "sessionId">,
): LlmRouter {
  let usedInRun = 0;
  return {
    candidates: (options) => llm.candidates(options),
    get configuredProviders() {
      return llm.configuredProviders;
    },
    get offlineOnly() {
      return llm.offlineOnly;
    },
    async complete(options) {
      const needed = estimateMessages(options.request.messages);
      const failure = budgetFailure(await budgets.state(task), needed, usedInRun);
      if (failure) throw failure;
      const completion = await llm.complete(options);
      usedInRun += completion.usage.totalTokens;
      return completion;
    },
  };
}
