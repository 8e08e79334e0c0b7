import type { Db } from "@tog/db";
import type { Logger } from "@tog/core";
import type { ChatMessage } from "@tog/providers";
import type { TaskInfo, TaskSpec } from "../runtime/workflow-context.ts";
import { shapeHistory, type ShapedHistory } from "./history-shaping.ts";
import { effectiveWindow } from "./presets.ts";

// Conversation memory of a session: the earlier turns a later task's agent gets. A turn is an
// earlier COMPLETED task of the same session with a non-empty result (created before this task),
// as two messages: the user's query and the assistant's result. Failed, cancelled and running
// tasks are not part of the conversation. Shaping (window, primers/recents, compression) is in
// history-shaping.ts. Reads PostgreSQL directly: only the head and the tail of a long session
// are fetched, never more than the window can use.

export interface SessionMemoryOptions {
  db: Db;
  /** Context window (tokens) of the model the task will use; compression is relative to it. */
  contextWindow: (spec: TaskSpec) => number;
  logger?: Logger | undefined;
}

interface TurnRow {
  id: string;
  query: string;
  result: string;
}

export class SessionMemory {
  readonly #db: Db;
  readonly #contextWindow: (spec: TaskSpec) => number;
  readonly #logger: Logger | undefined;

  constructor(options: SessionMemoryOptions) {
    this.#db = options.db;
    this.#contextWindow = options.contextWindow;
    this.#logger = options.logger;
  }

  async load(task: Pick<TaskInfo, "id" | "sessionId" | "createdAt" | "spec">): Promise<ShapedHistory> {
    const settings = effectiveWindow(task.spec.window);
    const earlier = (order: "ASC" | "DESC", limit: number) =>
      this.#db.$queryRawUnsafe<TurnRow[]>(
        `SELECT id::text, query, result FROM tasks
         WHERE session_id = $1::uuid AND status = 'COMPLETED' AND result IS NOT NULL AND result <> ''
           AND (created_at < $2 OR (created_at = $2 AND id < $3::uuid))
         ORDER BY created_at ${order}, id ${order} LIMIT $4`,
        task.sessionId,
        task.createdAt,
        task.id,
        limit,
      );
    const [counted, head, tail] = await Promise.all([
      this.#db.$queryRaw<{ n: bigint }[]>`
        SELECT count(*) AS n FROM tasks
        WHERE session_id = ${task.sessionId}::uuid AND status = 'COMPLETED' AND result IS NOT NULL AND result <> ''
          AND (created_at < ${task.createdAt} OR (created_at = ${task.createdAt} AND id < ${task.id}::uuid))`,
      // Two messages per turn: enough turns for the primers and for the rest of the window.
      earlier("ASC", Math.max(1, Math.ceil(settings.primersCount / 2))),
      earlier("DESC", Math.max(1, Math.ceil(settings.historyWindowSize / 2))),
    ]);
    const turns = new Map<string, TurnRow>();
    for (const t of head) turns.set(t.id, t);
    for (const t of tail.reverse()) turns.set(t.id, t);
    const messages: ChatMessage[] = [];
    for (const t of turns.values()) messages.push({ role: "user", content: t.query }, { role: "assistant", content: t.result });
    const total = 2 * Number(counted[0]?.n ?? 0);

    const shaped = shapeHistory(messages, settings, this.#contextWindow(task.spec), Math.max(total, messages.length));
    if (shaped.compression || shaped.omitted > 0) {
      this.#logger?.info(
        { workflowId: task.id, sessionId: task.sessionId, available: shaped.available, omitted: shaped.omitted, compression: shaped.compression },
        "session history shaped",
      );
    }
    return shaped;
  }
}
