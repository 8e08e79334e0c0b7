import { createHash } from "node:crypto";
import { publishSessionChanged, type Bus } from "@tog/bus";
import { executionModeOf } from "@tog/proto";
import type { Catalog } from "@tog/catalog";
import { isDependencyUnavailable, type Logger } from "@tog/core";
import { terminalErrorData, type ErrorType, type TaskEvent } from "@tog/events";
import type { ChatMessage, LlmRouter } from "@tog/providers";
import type { ToolRegistry } from "@tog/tools";
import type { ApprovalRepository } from "./approval.repository.ts";
import { busPosition } from "./bus-position.ts";
import type { SignalListener } from "./signal-listener.ts";
import { WorkflowEventEmitter } from "./event-emitter.ts";
import {
  LeaseLostError,
  type RunRepository,
  type ClaimedTask,
  type FinalWrite,
  type StepRecord,
} from "./run.repository.ts";
import {
  WorkflowFailure,
  type ApprovalOutcome,
  type ApprovalRequest,
  type PendingEvent,
  type StepMeta,
  type StepResult,
  type TaskInfo,
  type TaskWorkflow,
  type FlowContext,
  type WorkflowOutcome,
  type WorkflowSettings,
} from "./flow-context.ts";
import { tracedLlm, tracedStep, tracedTools } from "../telemetry/traced-calls.ts";

// Runs one claimed task: restores its checkpoints, republishes committed events the bus never
// got, runs the workflow with a FlowContext backed by PostgreSQL and JetStream, and writes
// the final status with the terminal event. Cancellation, the agent timeout, worker shutdown
// and lease loss all arrive as one AbortSignal with a typed reason.

export interface RunnerDeps {
  bus: Bus;
  /** This process's listener for signal hints (one NATS subscription per worker process). */
  signals: SignalListener;
  runs: RunRepository;
  approvals: ApprovalRepository;
  llm: LlmRouter;
  tools: ToolRegistry;
  catalog: Catalog;
  settings: WorkflowSettings;
  workflow: TaskWorkflow;
  logger: Logger;
  workerId: string;
  leaseMs: number;
  timeoutSeconds: number;
  /** How often a waiting approval re-reads its row besides the NATS wake-up (default 2 s). */
  approvalPollMs?: number;
  /** The session issue's seam: earlier turns for the agent's input. */
  loadSessionHistory?: ((task: TaskInfo) => Promise<ChatMessage[]>) | undefined;
  /** The router one run uses (e.g. refusing calls over the session's token budget); default `llm`. */
  routerFor?: ((task: TaskInfo, llm: LlmRouter) => LlmRouter) | undefined;
  onEventPublished?: ((event: TaskEvent) => void) | undefined;
  /** After the final status is written (metrics). */
  onTaskFinished?: ((status: FinalWrite["status"]) => void) | undefined;
}

export type StopReason =
  | { kind: "cancel"; reason: string | null }
  | { kind: "timeout" }
  | { kind: "shutdown" }
  | { kind: "lost"; error?: Error };

/** What the worker does with the run's message afterwards. */
export type RunEnd = "finished" | "released" | "lost";

class StopSignal extends Error {
  readonly stop: StopReason;
  constructor(stop: StopReason) {
    super(`workflow stopped: ${stop.kind}`);
    this.name = "AbortError";
    this.stop = stop;
  }
}

const MAX_ATTEMPTS_SHOWN = 10;

export async function runClaimedTask(deps: RunnerDeps, claimed: ClaimedTask, shutdown: AbortSignal): Promise<RunEnd> {
  const { runs, logger } = deps;
  const log = logger.child({ workflowId: claimed.id });
  const steps = new Map<string, StepRecord>();
  // A first attempt has nothing to restore: no step was checkpointed and no event published
  // (only the worker holding the claim writes them). Saves three round trips per task.
  const fresh = claimed.attempts === 1;
  if (!fresh) for (const step of await runs.loadSteps(claimed.id)) steps.set(step.key, step);
  // Lifecycle at info (claimed, step finished, finished), with the trace ids of the run's span.
  const claimedAt = Date.now();
  log.info({ attempt: claimed.attempts, restoredSteps: steps.size }, "task claimed");

  const root = new AbortController();
  const stop = (reason: StopReason) => {
    if (!root.signal.aborted) root.abort(new StopSignal(reason));
  };
  const stopReason = (): StopReason | undefined =>
    root.signal.reason instanceof StopSignal ? root.signal.reason.stop : undefined;

  const onEmitterFailure = (error: Error) => stop({ kind: "lost", error });
  const emitter = fresh
    ? new WorkflowEventEmitter({
        bus: deps.bus,
        workflowId: claimed.id,
        traceId: claimed.traceId,
        defaultAgentId: "orchestrator",
        start: { lastSeq: 0, lastStreamSeq: 0 },
        logger: log,
        onFailure: onEmitterFailure,
        onPublished: deps.onEventPublished,
      })
    : await openEmitter(deps, claimed.id, claimed.traceId, steps, log, onEmitterFailure);

  // Wake-ups: cancellation and approval decisions are written to PostgreSQL, then hinted here.
  const wakers = new Set<() => void>();
  const checkCancel = async () => {
    const state = await runs.cancelState(claimed.id);
    if (state.cancelRequested) stop({ kind: "cancel", reason: state.cancelReason });
  };
  // The last cancel check started by a signal: the final write waits for it, so a cancel that
  // reached this worker before the run's last step was checkpointed is honoured.
  let cancelCheck: Promise<void> = Promise.resolve();
  const unlisten = deps.signals.listen(claimed.id, () => {
    for (const wake of wakers) wake();
    cancelCheck = checkCancel().catch((err: unknown) => log.warn({ err }, "reading the cancel state failed"));
  });

  const onShutdown = () => stop({ kind: "shutdown" });
  shutdown.addEventListener("abort", onShutdown, { once: true });
  if (shutdown.aborted) onShutdown();
  if (claimed.cancelRequested) stop({ kind: "cancel", reason: claimed.cancelReason });

  const deadlineIn = claimed.deadlineAt.getTime() - Date.now();
  const deadline = setTimeout(() => stop({ kind: "timeout" }), Math.max(0, deadlineIn));
  const releaseLease = runs.holdLease(claimed.id, deps.workerId, deps.leaseMs, {
    onRenewed: (state) => {
      if (state.cancelRequested) stop({ kind: "cancel", reason: state.cancelReason });
    },
    onLost: () => stop({ kind: "lost" }),
    onError: (err) => log.warn({ err }, "lease heartbeat failed"),
  });

  const task: TaskInfo = {
    id: claimed.id,
    userId: claimed.userId,
    sessionId: claimed.sessionId,
    traceId: claimed.traceId,
    spec: claimed.spec,
    createdAt: claimed.createdAt,
    attempt: claimed.attempts,
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

    const runDeps = deps.routerFor ? { ...deps, llm: deps.routerFor(task, deps.llm) } : deps;
    const ctx = createContext({
      deps: runDeps,
      task,
      steps,
      emitter,
      signal: root.signal,
      prefix: "",
      agentId: "orchestrator",
      inflight,
      wakers,
      log,
    });
    let outcome: WorkflowOutcome | undefined;
    let failure: unknown;
    try {
      if (root.signal.aborted) throw root.signal.reason;
      outcome = await deps.workflow(ctx);
    } catch (err) {
      failure = err;
      // Stop siblings still running, then wait for all of them before the terminal event.
      if (!root.signal.aborted) root.abort(new Error("workflow failed"));
    }
    await Promise.allSettled([...inflight]);
    await cancelCheck;

    const reason = stopReason();
    // PostgreSQL (or another dependency) briefly gone is not the task's failure: hand the run
    // back (nak with back-off) and resume it from the checkpoints once it is reachable again.
    if (outcome === undefined && reason === undefined && isDependencyUnavailable(failure)) {
      log.warn({ err: failure }, "run interrupted: a dependency is unavailable; it will be retried");
      throw failure;
    }
    if (outcome === undefined && (reason?.kind === "shutdown" || reason?.kind === "lost" || emitter.failure)) {
      if (reason?.kind === "shutdown") {
        await emitter.flush().catch(() => undefined);
        await runs.release(claimed.id, deps.workerId);
        return "released";
      }
      return "lost";
    }

    // Cancelled after its last step but before the final write: the cancel wins (the API answered 202).
    const final =
      outcome !== undefined && reason?.kind !== "cancel"
        ? completed(outcome, claimed)
        : failed(failure, reason, deps.timeoutSeconds, log);
    await emitter.commit(
      [final.event],
      async (built) => {
        const event = built[0]!;
        await runs.finish(claimed.id, deps.workerId, final.write, {
          key: "finish",
          kind: "finish",
          name: final.write.status,
          agentId: "orchestrator",
          status: "completed",
          output: { status: final.write.status },
          events: built,
          firstSeq: event.seq,
          lastSeq: event.seq,
          startedAt: new Date(),
          completedAt: new Date(),
        });
      },
      { final: true },
    );
    publishSessionChanged(deps.bus, claimed.sessionId);
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
    clearTimeout(deadline);
    releaseLease();
    shutdown.removeEventListener("abort", onShutdown);
    unlisten();
    emitter.close();
  }
}

/**
 * Re-establishes the emitter after a crash: the next seq follows everything already on the
 * bus, in the permanent log or committed with a checkpoint, and committed events the bus never
 * received are published first.
 */
export async function openEmitter(
  deps: Pick<RunnerDeps, "bus" | "runs" | "onEventPublished">,
  workflowId: string,
  traceId: string,
  steps: ReadonlyMap<string, StepRecord>,
  logger: Logger,
  onFailure: (error: Error) => void,
): Promise<WorkflowEventEmitter> {
  const [position, persisted] = await Promise.all([
    busPosition(deps.bus, workflowId),
    deps.runs.persistedLastSeq(workflowId),
  ]);
  const delivered = Math.max(position.lastSeq, persisted);
  let lastSeq = delivered;
  const missing: TaskEvent[] = [];
  for (const step of steps.values()) {
    if (step.lastSeq !== null && step.lastSeq > lastSeq) lastSeq = step.lastSeq;
    for (const event of step.events ?? []) if (event.seq > delivered) missing.push(event);
  }
  missing.sort((a, b) => a.seq - b.seq);
  const emitter = new WorkflowEventEmitter({
    bus: deps.bus,
    workflowId,
    traceId,
    defaultAgentId: "orchestrator",
    start: { lastSeq: delivered, lastStreamSeq: position.lastStreamSeq },
    logger,
    onFailure,
    onPublished: deps.onEventPublished,
  });
  if (missing.length > 0) {
    logger.info(
      { count: missing.length, fromSeq: missing[0]!.seq },
      "republishing committed events the bus never received",
    );
    await emitter.republish(missing);
  }
  // Seqs a crashed worker allocated to live events it never published are free again: the next
  // event takes the first seq after everything delivered or committed, so there is no gap.
  if (emitter.lastSeq < lastSeq)
    throw new Error(`committed events of ${workflowId} end at seq ${lastSeq}, bus at ${emitter.lastSeq}`);
  return emitter;
}

interface ContextState {
  deps: RunnerDeps;
  task: TaskInfo;
  steps: Map<string, StepRecord>;
  emitter: WorkflowEventEmitter;
  signal: AbortSignal;
  prefix: string;
  agentId: string;
  inflight: Set<Promise<unknown>>;
  wakers: Set<() => void>;
  log: Logger;
}

function createContext(state: ContextState): FlowContext {
  const { deps, task, steps, emitter, signal, prefix, agentId } = state;
  const throwIfStopped = () => {
    if (signal.aborted) throw signal.reason instanceof Error ? signal.reason : new StopSignal({ kind: "shutdown" });
  };

  async function step<T>(key: string, meta: StepMeta, fn: () => Promise<StepResult<T>>): Promise<T> {
    const fullKey = prefix + key;
    const done = steps.get(fullKey);
    if (done && done.status === "completed") return done.output as T;
    throwIfStopped();
    const startedAt = new Date();
    const result = await tracedStep(fullKey, meta, fn);
    throwIfStopped();
    const pendingEvents = (result.events ?? []).map((e) => ({ ...e, agent_id: e.agent_id ?? agentId }));
    const record = await emitter.commit(pendingEvents, async (built) => {
      const rec: StepRecord = {
        key: fullKey,
        kind: meta.kind,
        name: meta.name,
        agentId,
        status: "completed",
        output: result.output === undefined ? null : result.output,
        events: built.length > 0 ? built : null,
        firstSeq: built[0]?.seq ?? null,
        lastSeq: built.at(-1)?.seq ?? null,
        startedAt,
        completedAt: new Date(),
      };
      const started = built.find((e) => e.type === "WORKFLOW_STARTED");
      const mode = started ? executionModeOf((started.data as { mode: string }).mode) : undefined;
      await deps.runs.commitStep(task.id, deps.workerId, rec, mode);
      // One hint covers the claim (QUEUED → RUNNING) just before and the mode recorded now.
      if (mode !== undefined) publishSessionChanged(deps.bus, task.sessionId);
      return rec;
    });
    steps.set(fullKey, record);
    deps.logger.info({ workflowId: task.id, step: fullKey, kind: meta.kind, name: meta.name }, "step finished");
    // What a replay will return, so both paths hand the flow the same JSON-shaped value.
    return (result.output === undefined ? null : JSON.parse(JSON.stringify(result.output))) as T;
  }

  async function child<T>(childId: string, childAgentId: string, fn: (ctx: FlowContext) => Promise<T>): Promise<T> {
    const fullKey = `${prefix}child:${childId}`;
    const done = steps.get(fullKey);
    if (done && done.status === "completed") return done.output as T;
    throwIfStopped();
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    const startedAt = new Date();
    const childCtx = createContext({
      ...state,
      prefix: `${fullKey}/`,
      agentId: childAgentId,
      signal: controller.signal,
    });
    const run = (async () => {
      try {
        const output = await fn(childCtx);
        throwIfStopped();
        await emitter.commit([], async () => {
          const rec: StepRecord = {
            key: fullKey,
            kind: "child",
            name: childAgentId,
            agentId: childAgentId,
            status: "completed",
            output: output === undefined ? null : output,
            events: null,
            firstSeq: null,
            lastSeq: null,
            startedAt,
            completedAt: new Date(),
          };
          await deps.runs.commitStep(task.id, deps.workerId, rec);
          steps.set(fullKey, rec);
        });
        return (output === undefined ? null : JSON.parse(JSON.stringify(output))) as T;
      } catch (err) {
        // Keep the failed or cancelled child in the step history (timeline) under its own key.
        const cancelled = signal.aborted;
        await deps.runs
          .commitStep(task.id, deps.workerId, {
            key: `${fullKey}!${task.attempt}`,
            kind: "child",
            name: childAgentId,
            agentId: childAgentId,
            status: cancelled ? "cancelled" : "failed",
            output: { error: (err as Error).message },
            events: null,
            firstSeq: null,
            lastSeq: null,
            startedAt,
            completedAt: new Date(),
          })
          .catch(() => undefined);
        throw err;
      } finally {
        signal.removeEventListener("abort", forward);
      }
    })();
    state.inflight.add(run);
    run.then(
      () => state.inflight.delete(run),
      () => state.inflight.delete(run),
    );
    return run;
  }

  async function requestApproval(request: ApprovalRequest): Promise<ApprovalOutcome> {
    const timeoutSeconds = request.timeoutSeconds ?? deps.settings.approvalTimeoutSeconds;
    const approvalId = `apr_${createHash("sha256").update(`${task.id}:${prefix}${request.key}`).digest("hex").slice(0, 24)}`;
    await step(`approval:${request.key}:requested`, { kind: "approval", name: request.toolName }, async () => {
      await deps.approvals.ensure({
        id: approvalId,
        workflowId: task.id,
        toolName: request.toolName,
        operation: request.operation,
        riskLevel: request.riskLevel,
        details: request.details,
        timeoutSeconds,
      });
      return {
        output: { approvalId },
        events: [
          {
            type: "APPROVAL_REQUESTED",
            message: `Approval ${approvalId} requested: ${request.operation}`,
            data: {
              approval_id: approvalId,
              tool_name: request.toolName,
              operation: request.operation,
              risk_level: request.riskLevel,
              timeout_seconds: timeoutSeconds,
              details: request.details as never,
            },
          } satisfies PendingEvent<"APPROVAL_REQUESTED">,
          {
            type: "WAITING",
            message: `Waiting for approval ${approvalId}`,
            data: {
              waiting_for: "approval",
              wait_reason: `Human approval of: ${request.operation}`,
              estimated_wait_seconds: timeoutSeconds,
            },
          } satisfies PendingEvent<"WAITING">,
        ],
      };
    });

    return step(`approval:${request.key}`, { kind: "approval", name: "decision" }, async () => {
      const row = await waitForDecision(approvalId);
      const decision = row.status === "approved" ? "approved" : row.status === "denied" ? "denied" : "timeout";
      const approvedBy = row.decidedBy ?? "system";
      const comments = row.comments ?? "";
      const outcome: ApprovalOutcome =
        decision === "approved"
          ? {
              decision,
              approvalId,
              approvedBy,
              comments,
              ...(row.modifiedAction ? { modifiedAction: row.modifiedAction } : {}),
            }
          : { decision, approvalId, approvedBy, comments };
      return {
        output: outcome,
        events: [
          {
            type: "APPROVAL_DECISION",
            message: `Approval ${approvalId} ${decision}`,
            data: {
              approval_id: approvalId,
              decision,
              approved_by: approvedBy,
              timestamp: new Date().toISOString(),
              comments,
            },
          } satisfies PendingEvent<"APPROVAL_DECISION">,
        ],
      };
    });
  }

  async function waitForDecision(approvalId: string) {
    const pollMs = deps.approvalPollMs ?? 2_000;
    for (;;) {
      throwIfStopped();
      let row = await deps.approvals.get(approvalId);
      if (!row) throw new Error(`approval ${approvalId} not found`);
      if (row.status === "pending" && row.expiresAt.getTime() <= Date.now())
        row = (await deps.approvals.expire(approvalId)) ?? row;
      if (row.status !== "pending") return row;
      const waitMs = Math.max(10, Math.min(pollMs, row.expiresAt.getTime() - Date.now()));
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          state.wakers.delete(done);
          signal.removeEventListener("abort", done);
          resolve();
        };
        const timer = setTimeout(done, waitMs);
        state.wakers.add(done);
        signal.addEventListener("abort", done, { once: true });
      });
    }
  }

  return {
    task,
    agentId,
    signal,
    llm: tracedLlm(deps.llm),
    tools: tracedTools(deps.tools),
    catalog: deps.catalog,
    settings: deps.settings,
    emit(type, message, data, emitAgentId) {
      emitter.emit({ type, message, data, agent_id: emitAgentId ?? agentId } as PendingEvent);
    },
    step,
    child,
    requestApproval,
    loadSessionHistory: () => deps.loadSessionHistory?.(task) ?? Promise.resolve([]),
  };
}

interface FinalState {
  write: FinalWrite;
  event: PendingEvent;
}

function completed(outcome: WorkflowOutcome, claimed: ClaimedTask): FinalState {
  const durationMs = Math.max(0, Date.now() - claimed.startedAt.getTime());
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

function failed(failure: unknown, reason: StopReason | undefined, timeoutSeconds: number, log: Logger): FinalState {
  let status: FinalWrite["status"] = "FAILED";
  let errorType: ErrorType = "INTERNAL_ERROR";
  let message = "Internal error";
  let retryCount = 0;
  let maxRetries = 0;
  if (reason?.kind === "cancel") {
    status = "CANCELLED";
    errorType = "CANCELLED";
    message = reason.reason ? `Task cancelled: ${reason.reason}` : "Task cancelled by user";
  } else if (reason?.kind === "timeout") {
    status = "TIMEOUT";
    errorType = "TIMEOUT";
    message = `Task exceeded the agent timeout of ${timeoutSeconds} s`;
  } else if (failure instanceof WorkflowFailure) {
    errorType = failure.errorType as ErrorType;
    message = failure.message;
    retryCount = failure.retryCount;
    maxRetries = failure.maxRetries;
  } else {
    log.error({ err: failure }, "workflow failed unexpectedly");
  }
  return {
    write: {
      status,
      result: null,
      error: message,
      errorType,
      mode: null,
      modelUsed: null,
      provider: null,
      usage: null,
    },
    event: {
      type: "ERROR_OCCURRED",
      agent_id: "orchestrator",
      message,
      data: terminalErrorData({
        status,
        error_type: errorType,
        error_message: message,
        retry_count: retryCount,
        max_retries: maxRetries,
      }),
    } as PendingEvent<"ERROR_OCCURRED">,
  };
}
