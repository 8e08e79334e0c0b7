import { publishSessionChanged, type Bus } from "@tog/bus";
import type { Catalog } from "@tog/catalog";
import type { Logger } from "@tog/core";
import type { ChatMessage, LlmRouter } from "@tog/providers";
import type { ToolRegistry } from "@tog/tools";
import { tracedLlm, tracedStep, tracedTools } from "../telemetry/traced-calls.ts";
import type { ApprovalRepository } from "./approval.repository.ts";
import { requestApproval } from "./approval-wait.ts";
import type { TaskEventEmitter } from "./event-emitter.ts";
import type { FlowContext, PendingEvent, StepMeta, StepResult, TaskInfo, RunSettings } from "./flow-context.ts";
import type { TaskEvent } from "@tog/events";
import type { RunRepository, StepRecord } from "./run.repository.ts";
import { executionModeIn } from "./execution-mode.ts";
import { throwIfStopped } from "./stop-reason.ts";

// The FlowContext a run hands its flow, backed by PostgreSQL checkpoints and the task's event stream.
//
// flow-context.ts says what flows may rely on. Steps are checkpointed with the events they report,
// child tasks run under their own key prefix and agent id, live events go out within a turn (event-emitter.ts), approvals
// wait in approval-wait.ts. A step already checkpointed by an earlier run returns its stored
// output without running again.

export interface RunContextDeps {
  bus: Bus;
  runs: RunRepository;
  approvals: ApprovalRepository;
  llm: LlmRouter;
  tools: ToolRegistry;
  catalog: Catalog;
  settings: RunSettings;
  logger: Logger;
  workerId: string;
  /** How often a waiting approval re-reads its row besides the NATS wake-up (default 2 s). */
  approvalPollMs?: number | undefined;
  /** The session issue's seam: earlier turns for the agent's input. */
  loadSessionHistory?: ((task: TaskInfo) => Promise<ChatMessage[]>) | undefined;
}

export interface RunContextState {
  deps: RunContextDeps;
  task: TaskInfo;
  /** Checkpointed steps by key: restored ones, then each step as it is committed. */
  steps: Map<string, StepRecord>;
  emitter: TaskEventEmitter;
  signal: AbortSignal;
  /** Key prefix of this context's steps (`""` for the task, `child:<id>/…` in a child task). */
  prefix: string;
  agentId: string;
  /** Child tasks still running: the final write waits for them. */
  inflight: Set<Promise<unknown>>;
  /** Wake-ups called on the run's signal hints. */
  wakers: Set<() => void>;
}

/**
 * Writes a run's steps in one statement under its lease. The write that carries WORKFLOW_STARTED
 * (a checkpoint, or the staged write before a live event) also records the mode, and one session
 * hint then covers the claim (QUEUED → RUNNING) just before and the mode.
 */
export async function writeSteps(
  deps: Pick<RunContextDeps, "runs" | "bus" | "workerId">,
  task: Pick<TaskInfo, "id" | "sessionId">,
  records: StepRecord[],
): Promise<void> {
  const mode = executionModeIn(records);
  await deps.runs.commitSteps(task.id, deps.workerId, records, mode);
  if (mode !== undefined) publishSessionChanged(deps.bus, task.sessionId);
}

export function createRunContext(state: RunContextState): FlowContext {
  const { deps, task, steps, emitter, signal, prefix, agentId } = state;

  async function step<T>(key: string, meta: StepMeta, fn: () => Promise<StepResult<T>>): Promise<T> {
    const fullKey = prefix + key;
    const done = steps.get(fullKey);
    if (done && done.status === "completed") return done.output as T;
    // An effect may depend on a deferred step's output: that output is written first.
    if (!meta.lazy) await emitter.writeDeferred();
    throwIfStopped(signal);
    const startedAt = new Date();
    const result = await tracedStep(fullKey, meta, fn);
    throwIfStopped(signal);
    const pendingEvents = (result.events ?? []).map((e) => ({ ...e, agent_id: e.agent_id ?? agentId }));
    const toRecord = (built: TaskEvent[]): StepRecord => ({
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
    });
    const record =
      meta.lazy || meta.deferred
        ? emitter.stage(pendingEvents, toRecord, { deferred: meta.deferred })
        : await emitter.commit(pendingEvents, async (built, lazy) => {
            const rec = toRecord(built);
            await writeSteps(deps, task, [...lazy, rec]);
            return rec;
          });
    steps.set(fullKey, record);
    deps.logger.info({ taskId: task.id, step: fullKey, kind: meta.kind, name: meta.name }, "step finished");
    // What a replay will return, so both paths hand the flow the same JSON-shaped value.
    return (result.output === undefined ? null : JSON.parse(JSON.stringify(result.output))) as T;
  }

  async function child<T>(childId: string, childAgentId: string, fn: (ctx: FlowContext) => Promise<T>): Promise<T> {
    const fullKey = `${prefix}child:${childId}`;
    const done = steps.get(fullKey);
    if (done && done.status === "completed") return done.output as T;
    throwIfStopped(signal);
    // The child task is cancelled with its parent.
    const controller = new AbortController();
    const forward = () => controller.abort(signal.reason);
    signal.addEventListener("abort", forward, { once: true });
    const startedAt = new Date();
    const childCtx = createRunContext({
      ...state,
      prefix: `${fullKey}/`,
      agentId: childAgentId,
      signal: controller.signal,
    });
    const run = (async () => {
      try {
        const output = await fn(childCtx);
        throwIfStopped(signal);
        // Lazy: a child's output follows from its own checkpointed steps, so a run that crashes
        // before this record is written replays the child from them and gets the same output.
        const rec = emitter.stage([], () => ({
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
        }));
        steps.set(fullKey, rec);
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
    requestApproval: (request) =>
      requestApproval(
        {
          approvals: deps.approvals,
          taskId: task.id,
          keyPrefix: prefix,
          step,
          signal,
          wakers: state.wakers,
          defaultTimeoutSeconds: deps.settings.approvalTimeoutSeconds,
          pollMs: deps.approvalPollMs ?? 2_000,
        },
        request,
      ),
    loadSessionHistory: () => deps.loadSessionHistory?.(task) ?? Promise.resolve([]),
  };
}
