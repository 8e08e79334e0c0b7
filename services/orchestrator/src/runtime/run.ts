import { publishSessionChanged } from "@tog/bus";
import { isDependencyUnavailable } from "@tog/core";
import type { TaskEvent } from "@tog/events";
import type { LlmRouter } from "@tog/providers";
import type { FinalWrite } from "./final-write.repository.ts";
import { commitFinalWrite, completedState, unfinishedState } from "./final-write.ts";
import type { TaskInfo, TaskFlow, FlowOutcome } from "./flow-context.ts";
import { runEmitter } from "./open-emitter.ts";
import { createRunContext, writeSteps, type RunContextDeps } from "./run-context.ts";
import { LeaseLostError, type ClaimedTask, type StepRecord } from "./run.repository.ts";
import { watchRun } from "./run-watch.ts";
import type { SignalListener } from "./signal-listener.ts";
import { RunStops } from "./stop-reason.ts";

// Runs one claimed task start to end, so the order of a run's phases reads in one place.
//
// Restore its checkpoints, reopen its event stream, watch for what stops it (run-watch.ts), run
// its flow with a FlowContext (run-context.ts), then either hand the run back (shutdown, lost
// lease, a dependency away) or make the final write (final-write.ts). docs/architecture.md,
// "Orchestrator runtime".

export interface RunnerDeps extends RunContextDeps {
  /** This process's listener for signal hints (one NATS subscription per worker process). */
  signals: SignalListener;
  task: TaskFlow;
  leaseMs: number;
  timeoutSeconds: number;
  /** The router one run uses (e.g. refusing calls over the session's token budget); default `llm`. */
  routerFor?: ((task: TaskInfo, llm: LlmRouter) => LlmRouter) | undefined;
  onEventPublished?: ((event: TaskEvent) => void) | undefined;
  /** EVENTS_MAX_AGE_SECONDS in ms: what a later run of a task sends again (open-emitter.ts). */
  eventsMaxAgeMs?: number | undefined;
  /** EVENT_MESSAGES (open-emitter.ts). */
  eventMessages?: "per-write" | "per-event" | undefined;
  /** After the final status is written (metrics). */
  onTaskFinished?: ((status: FinalWrite["status"]) => void) | undefined;
}

/** What the worker does with the run's message afterwards. */
export type RunEnd = "finished" | "released" | "lost";

const MAX_ATTEMPTS_SHOWN = 10;

export async function runClaimedTask(deps: RunnerDeps, claimed: ClaimedTask, shutdown: AbortSignal): Promise<RunEnd> {
  const { runs, logger } = deps;
  const log = logger.child({ taskId: claimed.id });
  const steps = new Map<string, StepRecord>();
  // A first run has nothing to restore: only the worker holding the claim checkpoints steps.
  if (claimed.attempts > 1) for (const step of await runs.loadSteps(claimed.id)) steps.set(step.key, step);
  // Lifecycle at info (claimed, step finished, finished), with the trace ids of the run's span.
  const claimedAt = Date.now();
  log.info({ attempt: claimed.attempts, restoredSteps: steps.size }, "task claimed");

  const stops = new RunStops();
  const emitter = await runEmitter(deps, claimed, steps, log, (error) => stops.stop({ kind: "lost", error }), {
    writeStaged: (lazy) => writeSteps(deps, claimed, lazy),
    logLive: (events) => runs.logEvents(claimed.id, deps.workerId, events),
  });
  // Wake-ups: cancellation and approval decisions are written to PostgreSQL, then hinted.
  const wakers = new Set<() => void>();
  const watch = watchRun({
    runs,
    signals: deps.signals,
    claimed,
    workerId: deps.workerId,
    leaseMs: deps.leaseMs,
    shutdown,
    stops,
    wakers,
    log,
  });

  const task: TaskInfo = {
    id: claimed.id,
    userId: claimed.userId,
    sessionId: claimed.sessionId,
    traceId: claimed.traceId,
    spec: claimed.spec,
    createdAt: claimed.createdAt,
    attempt: claimed.attempts,
    session: claimed.session,
  };
  const inflight = new Set<Promise<unknown>>();

  try {
    if (claimed.attempts > 1 && steps.size > 0) {
      emitter.emit({
        type: "ERROR_RECOVERY",
        agent_id: "orchestrator",
        message: `Resumed from ${steps.size} checkpointed step${steps.size === 1 ? "" : "s"} after the previous worker stopped`,
        data: {
          error_type: "INTERNAL_ERROR",
          recovery_action: "resume_from_checkpoint",
          attempt: Math.min(claimed.attempts, MAX_ATTEMPTS_SHOWN),
          max_attempts: MAX_ATTEMPTS_SHOWN,
          success: true,
        },
      });
    }

    const contextDeps = deps.routerFor ? { ...deps, llm: deps.routerFor(task, deps.llm) } : deps;
    const ctx = createRunContext({
      deps: contextDeps,
      task,
      steps,
      emitter,
      signal: stops.signal,
      prefix: "",
      agentId: "orchestrator",
      inflight,
      wakers,
    });
    let outcome: FlowOutcome | undefined;
    let failure: unknown;
    try {
      if (stops.signal.aborted) throw stops.signal.reason;
      outcome = await deps.task(ctx);
    } catch (err) {
      failure = err;
      // Stop siblings still running, then wait for all of them before the terminal event.
      stops.abortAfterFailure();
    }
    await Promise.allSettled([...inflight]);
    await watch.lastCancelCheck();

    const stop = stops.reason;
    // PostgreSQL (or another dependency) briefly gone is not the task's failure: hand the run
    // back (nak with back-off) and resume it from the checkpoints once it is reachable again.
    if (outcome === undefined && stop === undefined && isDependencyUnavailable(failure)) {
      log.warn({ err: failure }, "run interrupted: a dependency is unavailable; it will be retried");
      throw failure;
    }
    if (outcome === undefined && (stop?.kind === "shutdown" || stop?.kind === "lost" || emitter.failure)) {
      if (stop?.kind === "shutdown") {
        // A model call's output staged for the next write is kept: the next run does not pay for it again.
        await emitter.writeDeferred().catch(() => undefined);
        await emitter.flush().catch(() => undefined);
        await runs.release(claimed.id, deps.workerId);
        return "released";
      }
      return "lost";
    }

    // Cancelled after its last step but before the final write: the cancel wins (the API answered 202).
    const final =
      outcome !== undefined && stop?.kind !== "cancel"
        ? completedState(outcome, claimed.startedAt)
        : unfinishedState(failure, stop, deps.timeoutSeconds, log);
    const written = await commitFinalWrite(emitter, runs, { taskId: claimed.id, owner: deps.workerId }, final);
    // Only a session whose views may be cached needs the hint (docs/decisions.md "Sessions", Cache).
    if (written.viewsCached) publishSessionChanged(deps.bus, claimed.sessionId);
    await emitter.flush();
    deps.onTaskFinished?.(final.write.status);
    log.info({ status: final.write.status, duration_ms: Date.now() - claimedAt }, "task finished");
    return "finished";
  } catch (err) {
    if (err instanceof LeaseLostError || emitter.failure) {
      log.warn({ err }, "run stopped: lease lost");
      return "lost";
    }
    throw err;
  } finally {
    watch.release();
    emitter.close();
  }
}
