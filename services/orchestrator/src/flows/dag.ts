import { isAbortError } from "@tog/providers";
import { WorkflowFailure } from "../runtime/flow-context.ts";
import type { Subtask } from "./planning.ts";

// Runs subtasks as soon as their dependencies are done, all ready ones at once (the caller
// starts each as a child workflow, which the runtime runs concurrently). The first failure is
// thrown at once as a SubtaskError: the runtime then aborts the siblings still running and
// awaits them before it writes the terminal event, so nothing is emitted after it.

export class SubtaskError extends Error {
  readonly subtask: Subtask;
  /** Results of the subtasks that did complete. */
  readonly completed: ReadonlyMap<string, unknown>;
  constructor(subtask: Subtask, cause: unknown, completed: ReadonlyMap<string, unknown>) {
    super(`Subtask ${subtask.id} failed: ${cause instanceof Error ? cause.message : String(cause)}`, { cause });
    this.name = "SubtaskError";
    this.subtask = subtask;
    this.completed = completed;
  }
}

type Settled<T> = { id: string; ok: true; value: T } | { id: string; ok: false; error: unknown };

export async function runDag<T>(
  subtasks: readonly Subtask[],
  run: (subtask: Subtask, done: ReadonlyMap<string, T>) => Promise<T>,
): Promise<Map<string, T>> {
  const done = new Map<string, T>();
  const started = new Set<string>();
  const running = new Map<string, Promise<Settled<T>>>();
  const launch = () => {
    for (const s of subtasks) {
      if (started.has(s.id) || !s.dependencies.every((d) => done.has(d))) continue;
      started.add(s.id);
      running.set(
        s.id,
        run(s, done).then(
          (value): Settled<T> => ({ id: s.id, ok: true, value }),
          (error: unknown): Settled<T> => ({ id: s.id, ok: false, error }),
        ),
      );
    }
  };

  launch();
  while (running.size > 0) {
    const settled = await Promise.race(running.values());
    running.delete(settled.id);
    if (!settled.ok)
      throw new SubtaskError(subtasks.find((s) => s.id === settled.id) as Subtask, settled.error, new Map(done));
    done.set(settled.id, settled.value);
    launch();
  }
  if (done.size < subtasks.length) {
    // Unreachable for plans from parsePlan (dependencies only point backwards).
    throw new Error(
      `Subtasks never became ready: ${subtasks
        .filter((s) => !done.has(s.id))
        .map((s) => s.id)
        .join(", ")}`,
    );
  }
  return done;
}

/**
 * What a failed subtask does to the task: a cancellation/abort, a human's approval decision
 * (APPROVAL_DENIED / APPROVAL_TIMEOUT) and the session's budget (BUDGET_EXCEEDED) end it as they
 * are; any other failure becomes
 * SUBTASK_FAILED naming the subtask, carrying the cause's retry counts.
 */
export function subtaskFailure(signal: AbortSignal, err: unknown): unknown {
  if (!(err instanceof SubtaskError)) return err;
  const cause = err.cause;
  if (signal.aborted || isAbortError(cause)) return cause;
  if (
    cause instanceof WorkflowFailure &&
    (cause.errorType === "APPROVAL_DENIED" ||
      cause.errorType === "APPROVAL_TIMEOUT" ||
      cause.errorType === "BUDGET_EXCEEDED")
  )
    return cause;
  const counts = cause instanceof WorkflowFailure ? { retryCount: cause.retryCount, maxRetries: cause.maxRetries } : {};
  return new WorkflowFailure("SUBTASK_FAILED", err.message, { cause, ...counts });
}

/** The results a subtask depends on, as the user message before its own task. */
export function dependencyContext(
  subtask: Subtask,
  all: readonly Subtask[],
  results: ReadonlyMap<string, { result: string }>,
): string | undefined {
  if (subtask.dependencies.length === 0) return undefined;
  const parts = subtask.dependencies.map((id) => {
    const dep = all.find((s) => s.id === id);
    return `### ${id}: ${dep?.description ?? ""}\n${results.get(id)?.result ?? ""}`;
  });
  return `Results of the earlier subtasks this one builds on:\n\n${parts.join("\n\n")}`;
}
