import type { Catalog } from "@tog/catalog";
import { EVENT_PAYLOAD_SCHEMAS, type EventType } from "@tog/events";
import type { ChatMessage, LlmRouter } from "@tog/providers";
import type { ToolRegistry } from "@tog/tools";
import type {
  ApprovalOutcome,
  ApprovalRequest,
  PendingEvent,
  StepMeta,
  StepResult,
  TaskInfo,
  TaskSpec,
  TaskFlow,
  FlowContext,
  FlowOutcome,
  RunSettings,
} from "../../src/runtime/flow-context.ts";
import { approvalRequestEvents } from "../../src/runtime/approval-wait.ts";

// An in-memory FlowContext for flow tests only, with the runtime's semantics where flows can
// tell the difference: step outputs are JSON round-tripped and returned from the cache on a
// replay (without running `fn` or re-emitting), children get namespaced keys and their own
// abort signal, approvals are two steps (`approval:<key>:requested`, `approval:<key>`), and a
// failed task aborts its still-running children and waits for them.

export interface RecordedEvent {
  seq: number;
  type: EventType;
  agent_id: string;
  message: string;
  data: Record<string, unknown>;
  /** Whether it came from a step's `events` (committed) or from `emit` (live). */
  committed: boolean;
}

export interface Checkpoint {
  kind: StepMeta["kind"] | "child";
  name: string;
  agentId: string;
  output: unknown;
}

export type ApprovalAnswer =
  | { decision: "approved"; approvedBy?: string; comments?: string; modifiedAction?: string }
  | { decision: "denied" | "timeout"; approvedBy?: string; comments?: string };

export interface MemoryRunOptions {
  spec: Partial<TaskSpec> & { query: string };
  llm: LlmRouter;
  tools: ToolRegistry;
  catalog: Catalog;
  settings?: Partial<RunSettings>;
  /** Pass the map of an earlier run to replay it. */
  checkpoints?: Map<string, Checkpoint>;
  /** Default: approve everything. */
  approve?: (request: ApprovalRequest) => ApprovalAnswer | Promise<ApprovalAnswer>;
  history?: ChatMessage[];
  sessionId?: string;
}

export interface MemoryRun {
  ctx: FlowContext;
  events: RecordedEvent[];
  checkpoints: Map<string, Checkpoint>;
  /** Keys of the steps that ran (not replayed) in this run, in order of completion. */
  executed: string[];
  approvals: ApprovalRequest[];
  /** Runs the task like the runtime does: a failure aborts the children and awaits them. */
  run(task: TaskFlow): Promise<{ outcome?: FlowOutcome; failure?: unknown }>;
}

export const DEFAULT_SETTINGS: RunSettings = {
  approvalThreshold: "high",
  approvalTimeoutSeconds: 60,
  maxToolIterations: 4,
  llmMaxRetries: 2,
};

export function normalizeSpec(spec: MemoryRunOptions["spec"]): TaskSpec {
  return {
    modelTier: "small",
    promptParams: {},
    disableAi: false,
    requireApproval: false,
    metadata: {},
    window: {
      historyWindowSize: 50,
      primersCount: 5,
      recentsCount: 15,
      compressionTriggerRatio: 0.8,
      compressionTargetRatio: 0.5,
    },
    ...spec,
  };
}

export function createMemoryRun(options: MemoryRunOptions): MemoryRun {
  const events: RecordedEvent[] = [];
  const checkpoints = options.checkpoints ?? new Map<string, Checkpoint>();
  const executed: string[] = [];
  const approvals: ApprovalRequest[] = [];
  const seen = new Set<string>();
  const inflight = new Set<Promise<unknown>>();
  const root = new AbortController();
  const settings: RunSettings = { ...DEFAULT_SETTINGS, ...options.settings };
  const task: TaskInfo = {
    id: "wf-memory",
    userId: "00000000-0000-4000-8000-000000000001",
    sessionId: options.sessionId ?? "session-memory",
    traceId: "0af7651916cd43dd8448eb211c80319c",
    spec: normalizeSpec(options.spec),
    createdAt: new Date(0),
    attempt: 1,
  };
  let approvalCount = 0;

  const record = (e: PendingEvent, agentId: string, committed: boolean) => {
    events.push({
      seq: events.length + 1,
      type: e.type,
      agent_id: e.agent_id ?? agentId,
      message: e.message,
      data: e.data as Record<string, unknown>,
      committed,
    });
  };

  function context(prefix: string, agentId: string, signal: AbortSignal): FlowContext {
    const throwIfStopped = () => {
      if (signal.aborted) throw signal.reason;
    };
    const claim = (key: string) => {
      if (seen.has(key)) throw new Error(`duplicate step key in one run: ${key}`);
      seen.add(key);
    };

    async function step<T>(key: string, meta: StepMeta, fn: () => Promise<StepResult<T>>): Promise<T> {
      const fullKey = prefix + key;
      claim(fullKey);
      const done = checkpoints.get(fullKey);
      if (done) return structuredClone(done.output) as T;
      throwIfStopped();
      const result = await fn();
      throwIfStopped();
      const output = result.output === undefined ? null : (JSON.parse(JSON.stringify(result.output)) as unknown);
      for (const e of result.events ?? []) record(e, agentId, true);
      checkpoints.set(fullKey, { kind: meta.kind, name: meta.name, agentId, output });
      executed.push(fullKey);
      return structuredClone(output) as T;
    }

    async function child<T>(childId: string, childAgentId: string, fn: (ctx: FlowContext) => Promise<T>): Promise<T> {
      const fullKey = `${prefix}child:${childId}`;
      claim(fullKey);
      const done = checkpoints.get(fullKey);
      if (done) return structuredClone(done.output) as T;
      throwIfStopped();
      const controller = new AbortController();
      const forward = () => controller.abort(signal.reason);
      signal.addEventListener("abort", forward, { once: true });
      const run = (async () => {
        try {
          const out = await fn(context(`${fullKey}/`, childAgentId, controller.signal));
          throwIfStopped();
          const output = out === undefined ? null : (JSON.parse(JSON.stringify(out)) as unknown);
          checkpoints.set(fullKey, { kind: "child", name: childAgentId, agentId: childAgentId, output });
          executed.push(fullKey);
          return structuredClone(output) as T;
        } finally {
          signal.removeEventListener("abort", forward);
        }
      })();
      inflight.add(run);
      run.then(
        () => inflight.delete(run),
        () => inflight.delete(run),
      );
      return run;
    }

    async function requestApproval(request: ApprovalRequest): Promise<ApprovalOutcome> {
      const timeoutSeconds = request.timeoutSeconds ?? settings.approvalTimeoutSeconds;
      const { approvalId } = await step(
        `approval:${request.key}:requested`,
        { kind: "approval", name: request.toolName },
        async () => {
          approvals.push(request);
          const id = `apr_${++approvalCount}`;
          return {
            output: { approvalId: id },
            events: approvalRequestEvents(id, request, timeoutSeconds),
          };
        },
      );
      return step(`approval:${request.key}`, { kind: "approval", name: "decision" }, async () => {
        const answer: ApprovalAnswer = options.approve ? await options.approve(request) : { decision: "approved" };
        const approvedBy = answer.approvedBy ?? (answer.decision === "timeout" ? "system" : "reviewer");
        const comments = answer.comments ?? "";
        const outcome: ApprovalOutcome =
          answer.decision === "approved"
            ? {
                decision: "approved",
                approvalId,
                approvedBy,
                comments,
                ...(answer.modifiedAction ? { modifiedAction: answer.modifiedAction } : {}),
              }
            : { decision: answer.decision, approvalId, approvedBy, comments };
        return {
          output: outcome,
          events: [
            {
              type: "APPROVAL_DECISION",
              message: `Approval ${approvalId} ${answer.decision}`,
              data: {
                approval_id: approvalId,
                decision: answer.decision,
                approved_by: approvedBy,
                timestamp: new Date().toISOString(),
                comments,
              },
            } satisfies PendingEvent<"APPROVAL_DECISION">,
          ],
        };
      });
    }

    return {
      task,
      agentId,
      signal,
      llm: options.llm,
      tools: options.tools,
      catalog: options.catalog,
      settings,
      emit(type, message, data, emitAgentId) {
        record({ type, message, data } as PendingEvent, emitAgentId ?? agentId, false);
      },
      step,
      child,
      requestApproval,
      loadSessionHistory: async () => structuredClone(options.history ?? []),
    };
  }

  const ctx = context("", "orchestrator", root.signal);
  return {
    ctx,
    events,
    checkpoints,
    executed,
    approvals,
    async run(task) {
      try {
        return { outcome: await task(ctx) };
      } catch (failure) {
        if (!root.signal.aborted) root.abort(new Error("task failed"));
        await Promise.allSettled([...inflight]);
        return { failure };
      }
    },
  };
}

/** Every event whose `data` its type's zod schema rejects, with the reason. */
export function invalidPayloads(events: readonly RecordedEvent[]): string[] {
  const problems: string[] = [];
  for (const e of events) {
    const parsed = EVENT_PAYLOAD_SCHEMAS[e.type].safeParse(e.data);
    if (!parsed.success) problems.push(`#${e.seq} ${e.type}: ${parsed.error.message}`);
  }
  return problems;
}
