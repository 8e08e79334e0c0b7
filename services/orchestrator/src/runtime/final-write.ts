import type { Logger } from "@tog/core";
import { buildEvent, terminalErrorData, type ErrorType, type EventPayloads, type TaskEvent } from "@tog/events";
import type { TaskEventEmitter } from "./event-emitter.ts";
import { executionModeIn } from "./execution-mode.ts";
import type { FinalWrite } from "./final-write.repository.ts";
import { TaskFailure, type PendingEvent, type FlowOutcome } from "./flow-context.ts";
import type { RunRepository, StepRecord } from "./run.repository.ts";
import type { StopReason } from "./stop-reason.ts";

// A task's final state and terminal event, built one way for a run and for a cancel before any run.
//
// The run passes its flow's outcome, failure or stop reason; the cancel of a QUEUED task
// (tasks/task.service.ts) passes its reason. Both commit it as the task's `finish` step with the
// statement in final-write.repository.ts; the terminal event is published after that commit.

/** The task's terminal state and its terminal event (WORKFLOW_COMPLETED or a terminal ERROR_OCCURRED). */
export interface FinalState {
  write: FinalWrite;
  event: PendingEvent;
}

export function completedState(outcome: FlowOutcome, startedAt: Date): FinalState {
  const durationMs = Math.max(0, Date.now() - startedAt.getTime());
  return {
    write: {
      status: "COMPLETED",
      result: outcome.result,
      error: "",
      errorType: null,
      mode: outcome.mode,
      modelUsed: outcome.modelUsed,
      provider: outcome.provider,
      usage: outcome.usage,
    },
    event: {
      type: "WORKFLOW_COMPLETED",
      agent_id: "orchestrator",
      message: "Task completed",
      data: {
        result: outcome.result,
        duration_ms: durationMs,
        total_tokens: outcome.usage.totalTokens,
        total_cost_usd: outcome.usage.costUsd,
        agents_used: outcome.agentsUsed,
        tools_invoked: outcome.toolsInvoked,
      },
    } satisfies PendingEvent<"WORKFLOW_COMPLETED">,
  };
}

export function cancelledState(reason: string | null): FinalState {
  return errorState({
    status: "CANCELLED",
    errorType: "CANCELLED",
    message: reason ? `Task cancelled: ${reason}` : "Task cancelled by user",
  });
}

/** A run that ends without an outcome: stopped by a cancel or the deadline, or its flow failed. */
export function unfinishedState(
  failure: unknown,
  stop: StopReason | undefined,
  timeoutSeconds: number,
  log: Logger,
): FinalState {
  if (stop?.kind === "cancel") return cancelledState(stop.reason);
  if (stop?.kind === "timeout") {
    return errorState({
      status: "TIMEOUT",
      errorType: "TIMEOUT",
      message: `Task exceeded the agent timeout of ${timeoutSeconds} s`,
    });
  }
  if (failure instanceof TaskFailure) {
    return errorState({
      status: "FAILED",
      errorType: failure.errorType as ErrorType,
      message: failure.message,
      retryCount: failure.retryCount,
      maxRetries: failure.maxRetries,
    });
  }
  log.error({ err: failure }, "task failed unexpectedly");
  return errorState({ status: "FAILED", errorType: "INTERNAL_ERROR", message: "Internal error" });
}

function errorState(e: {
  status: Exclude<FinalWrite["status"], "COMPLETED">;
  errorType: ErrorType;
  message: string;
  retryCount?: number;
  maxRetries?: number;
}): FinalState {
  return {
    write: {
      status: e.status,
      result: null,
      error: e.message,
      errorType: e.errorType,
      mode: null,
      modelUsed: null,
      provider: null,
      usage: null,
    },
    event: {
      type: "ERROR_OCCURRED",
      agent_id: "orchestrator",
      message: e.message,
      data: terminalErrorData({
        status: e.status,
        error_type: e.errorType,
        error_message: e.message,
        retry_count: e.retryCount ?? 0,
        max_retries: e.maxRetries ?? 0,
      }),
    } as PendingEvent<"ERROR_OCCURRED">,
  };
}

/**
 * What session history shows of a completed run beside the task row, from its terminal event;
 * kept in the `finish` step's output, which outlives that event in the log (docs/performance.md
 * "Each event's JSON once").
 */
function outcomeCounts(event: PendingEvent): { agents_used?: number; tools_invoked?: number } {
  if (event.type !== "WORKFLOW_COMPLETED") return {};
  const { agents_used, tools_invoked } = event.data as EventPayloads["WORKFLOW_COMPLETED"];
  return { agents_used, tools_invoked };
}

/** The `finish` step that commits the terminal event with the task's final state. */
export function finishStep(state: FinalState, event: TaskEvent): StepRecord {
  const now = new Date();
  return {
    key: "finish",
    kind: "finish",
    name: state.write.status,
    agentId: "orchestrator",
    status: "completed",
    output: { status: state.write.status, ...outcomeCounts(state.event) },
    events: [event],
    firstSeq: event.seq,
    lastSeq: event.seq,
    startedAt: now,
    completedAt: now,
  };
}

/** The terminal event of a task no run has claimed: its only event, seq 1. */
export function firstEventOf(taskId: string, traceId: string, state: FinalState): TaskEvent {
  const { type, message, data } = state.event;
  return buildEvent({ workflow_id: taskId, type, agent_id: "orchestrator", message, seq: 1, trace_id: traceId, data });
}

/**
 * A run's final write: the terminal event takes the run's next seq, is committed with the final
 * state (fenced by the lease) and then published; nothing the run emits can follow it.
 */
export async function commitFinalWrite(
  emitter: TaskEventEmitter,
  runs: RunRepository,
  run: { taskId: string; owner: string },
  state: FinalState,
): Promise<{ viewsCached: boolean }> {
  return emitter.commit(
    [state.event],
    (built, lazy) =>
      runs.finish(
        run.taskId,
        run.owner,
        // A run that ends with its start step still staged (e.g. INVALID_INPUT) records its mode here.
        { ...state.write, mode: state.write.mode ?? executionModeIn(lazy) ?? null },
        finishStep(state, built[0]!),
        lazy,
      ),
    { final: true },
  );
}
