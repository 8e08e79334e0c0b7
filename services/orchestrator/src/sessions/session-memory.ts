import type { DbPool } from "@tog/db";
import type { Logger } from "@tog/core";
import type { ChatMessage } from "@tog/providers";
import type { TaskInfo, TaskSpec } from "../runtime/flow-context.ts";
import { shapeHistory, type ShapedHistory } from "./history-shaping.ts";
import { effectiveWindow } from "./presets.ts";
import type { BudgetState } from "./session-budget.ts";
import { GroupCommit } from "../runtime/group-commit.ts";
import { readRunContexts, type RunContextQuery, type RunContextRow, type TurnRow } from "./session.repository.ts";

// Conversation memory of a session: the earlier turns a later task's agent gets. A turn is an
// earlier COMPLETED task of the same session with a non-empty result (created before this task),
// as two messages: the user's query and the assistant's result. Failed, cancelled and running
// tasks are not part of the conversation. Shaping (window, primers/recents, compression) is in
// history-shaping.ts. The read (session.repository.ts) fetches only the head and the tail of a long
// session, never more than the window can use.

export interface SessionMemoryOptions {
  /** The pg pool: read on every task, cheaper than through Prisma's raw query path. */
  pool: DbPool;
  /** Context window (tokens) of the model the task will use; compression is relative to it. */
  contextWindow: (spec: TaskSpec) => number;
  logger?: Logger | undefined;
}

export class SessionMemory {
  readonly #reads: GroupCommit<RunContextQuery, RunContextRow>;
  readonly #contextWindow: (spec: TaskSpec) => number;
  readonly #logger: Logger | undefined;

  constructor(options: SessionMemoryOptions) {
    // The runs of this worker that load their sessions while a read is in flight share the next
    // statement (runtime/group-commit.ts): one round trip for all of them.
    this.#reads = new GroupCommit({ flush: (qs) => readRunContexts(options.pool, qs), maxBatch: 100 });
    this.#contextWindow = options.contextWindow;
    this.#logger = options.logger;
  }

  async load(task: Pick<TaskInfo, "id" | "sessionId" | "createdAt" | "spec">): Promise<ShapedHistory> {
    return (await this.loadWithBudget(task)).history;
  }

  /**
   * The shaped history and the session's budget state (null when the session is gone), read in
   * one statement: a run needs both before its first model call.
   */
  async loadWithBudget(
    task: Pick<TaskInfo, "id" | "sessionId" | "createdAt" | "spec">,
  ): Promise<{ history: ShapedHistory; budget: BudgetState | null }> {
    const settings = effectiveWindow(task.spec.window);
    // Two messages per turn: enough turns for the primers and for the rest of the window, in one
    // statement. The newest turns first: when there are fewer than the window holds, they are all
    // the turns (a new session: one index probe that finds nothing), and the oldest are not read.
    // A long session is never counted: when head and tail do not meet, the window keeps the same
    // messages whatever the real number in between, so `available`/`omitted` (logged only) are
    // then lower bounds (docs/performance.md "Session memory").
    const { budget, turns: rows } = await this.#reads.submit({
      sessionId: task.sessionId,
      createdAt: task.createdAt,
      taskId: task.id,
      tail: Math.max(1, Math.ceil(settings.historyWindowSize / 2)),
      head: Math.max(1, Math.ceil(settings.primersCount / 2)),
    });
    const turns = new Map<string, TurnRow>();
    for (const t of rows) if (!t.recent) turns.set(t.id, t);
    const tail = rows.filter((t) => t.recent).reverse();
    for (const t of tail) turns.set(t.id, t);
    const turnRows = [...turns.values()];
    const messages: ChatMessage[] = [];
    for (const t of turnRows)
      messages.push({ role: "user", content: t.query }, { role: "assistant", content: t.result });

    const shaped = shapeHistory(messages, settings, this.#contextWindow(task.spec));
    if (shaped.compression || shaped.omitted > 0) {
      this.#logger?.info(
        {
          taskId: task.id,
          sessionId: task.sessionId,
          available: shaped.available,
          omitted: shaped.omitted,
          compression: shaped.compression,
        },
        "session history shaped",
      );
    }
    return { history: shaped, budget: budget ? { budget: budget.token_budget, used: budget.tokens_used } : null };
  }
}
