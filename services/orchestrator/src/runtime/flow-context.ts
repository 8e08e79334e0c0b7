import type { EventPayloads, EventType } from "@tog/events";
import type { Catalog, ModelTier } from "@tog/catalog";
import type { ChatMessage, LlmRouter } from "@tog/providers";
import type { ApprovalThreshold, RiskLevel, ToolRegistry } from "@tog/tools";

// The API flows are written against: what a flow (services/orchestrator/src/flows) sees of its run.
//
// run-context.ts implements it: durable steps checkpointed in PostgreSQL, events with a gap-free
// per-task seq on JetStream, cancellation, deadlines and approvals (docs/architecture.md,
// "Orchestrator runtime").
//
// Rules for flow code (the price of resuming from checkpoints after a crash):
// - Every side effect or non-deterministic value (LLM call, tool call, clock, random id) lives
//   inside a `step`; code between steps must be deterministic given the step outputs, so a
//   replay after a crash takes the same path and meets the same step keys.
// - Step keys are unique within the task and stable across replays (e.g. `llm:0`,
//   `tool:2:calculator`); a child task's keys are namespaced by the runtime.
// - Events that report a step's *result* are returned from the step (`events`) and committed
//   with its checkpoint: emitted exactly once even across crashes. `emit` is for live progress
//   inside a step (LLM_PARTIAL, AGENT_THINKING, PROGRESS...): a step redone after a crash may
//   emit its live events again, with new seqs. A live event waits one turn of the event loop;
//   a step that ends within that turn carries it in its own record (event-emitter.ts).

export type StepKind =
  | "start"
  | "plan"
  | "llm"
  | "tool"
  | "child"
  | "approval"
  | "timer"
  | "synthesis"
  | "team"
  | "finish";

export interface PendingEvent<T extends EventType = EventType> {
  type: T;
  /** Default: the context's agent id. */
  agent_id?: string;
  message: string;
  data: EventPayloads[T];
}

/** Build a PendingEvent with its payload type checked against its event type. */
export function pending<T extends EventType>(
  type: T,
  message: string,
  data: EventPayloads[T],
  agentId?: string,
): PendingEvent<T> {
  return agentId === undefined ? { type, message, data } : { type, message, data, agent_id: agentId };
}

export interface StepResult<T> {
  output: T;
  /** Committed with the checkpoint, then published; never emitted twice. */
  events?: PendingEvent[];
}

export interface StepMeta {
  kind: StepKind;
  /** Human-readable name for the timeline (`calculator`, `gpt-5-nano`, `decompose`...). */
  name: string;
  /**
   * Written with the next checkpoint instead of its own (the final write included), or before
   * the next live event: one commit fewer on the task's path. Only for steps without effects
   * outside the run (bookkeeping, reads): a crash before that write runs the step again, and
   * its events, never published before it is written, take the same seqs again.
   */
  lazy?: boolean | undefined;
  /**
   * Written like a lazy step — with the next write, or before the next live event — but, as
   * running it again costs (a model call), also before the next step that is not lazy starts,
   * so no later effect depends on an output that is not written. A crash before that write runs
   * it again; nothing it reported was published. A simple task's model call thus goes with the
   * final write (docs/performance.md "Deferred checkpoints").
   */
  deferred?: boolean | undefined;
}

/** The task as submitted, normalized by the gateway (contract 4.1). */
export interface TaskSpec {
  query: string;
  /** Requested mode; undefined = automatic detection. */
  mode?: "simple" | "standard" | "complex" | "supervisor" | undefined;
  modelTier: ModelTier;
  modelOverride?: string | undefined;
  providerOverride?: string | undefined;
  role?: string | undefined;
  systemPrompt?: string | undefined;
  promptParams: Record<string, unknown>;
  template?: string | undefined;
  templateVersion?: string | undefined;
  disableAi: boolean;
  requireApproval: boolean;
  /** Free-form context keys, passed to the agent environment and tools. */
  metadata: Record<string, unknown>;
  /** The recognized window controls (history_window_size, primers_count, ...), defaults filled. */
  window: {
    historyWindowSize: number;
    primersCount: number;
    recentsCount: number;
    compressionTriggerRatio: number;
    compressionTargetRatio: number;
    useCasePreset?: string | undefined;
  };
}

export interface TaskInfo {
  id: string;
  userId: string;
  sessionId: string;
  traceId: string;
  spec: TaskSpec;
  createdAt: Date;
  /** 1 on the first delivery; >1 when resumed after a crash or a shutdown. */
  attempt: number;
  /** The session as the claim read it (null: gone); undefined where no claim read it. */
  session?: SessionAtClaim | null | undefined;
}

/** What a run's claim reads of the task's session (sessions/session-context.ts). */
export interface SessionAtClaim {
  tokenBudget: number;
  tokensUsed: number;
  /** Tasks ever submitted into the session, this one included (it only grows). */
  taskCount: number;
}

export interface ApprovalRequest {
  /** Stable step key part, unique per task (e.g. `tool:3`). */
  key: string;
  toolName: string;
  operation: string;
  riskLevel: RiskLevel;
  details: Record<string, unknown>;
  /** Default: APPROVAL_TIMEOUT_SECONDS. */
  timeoutSeconds?: number | undefined;
}

export type ApprovalOutcome =
  | {
      decision: "approved";
      approvalId: string;
      approvedBy: string;
      comments: string;
      modifiedAction?: string | undefined;
    }
  | { decision: "denied" | "timeout"; approvalId: string; approvedBy: string; comments: string };

export interface RunSettings {
  /** High-risk tools need an approval (TOOL_APPROVAL_THRESHOLD). */
  approvalThreshold: ApprovalThreshold;
  approvalTimeoutSeconds: number;
  /** Upper bound of tool-calling iterations in standard mode. */
  maxToolIterations: number;
  /** The router's per-model retry budget (LLM_MAX_RETRIES), reported as max_retries in retry events. Default 2. */
  llmMaxRetries?: number | undefined;
}

export interface FlowContext {
  readonly task: TaskInfo;
  /** Agent id this context emits as (`orchestrator` for the task, the child's id in a child task). */
  readonly agentId: string;
  /** Aborted on cancel, timeout or worker shutdown; pass it to LLM and tool calls. */
  readonly signal: AbortSignal;
  readonly llm: LlmRouter;
  readonly tools: ToolRegistry;
  readonly catalog: Catalog;
  readonly settings: RunSettings;

  /** Live progress event, not checkpointed (see the rules above). Returns once it is queued. */
  emit<T extends EventType>(type: T, message: string, data: EventPayloads[T], agentId?: string): void;

  /** A durable step: returns the checkpointed output without running `fn` when the step is done. */
  step<T>(key: string, meta: StepMeta, fn: () => Promise<StepResult<T>>): Promise<T>;

  /**
   * A child task, run concurrently with its siblings when the caller does not await in
   * between: its own agent id, step keys namespaced by `childId`, cancelled with its parent;
   * recorded as a `child` step (its output is `fn`'s result). Events go to the parent's stream.
   */
  child<T>(childId: string, agentId: string, fn: (ctx: FlowContext) => Promise<T>): Promise<T>;

  /**
   * Emits APPROVAL_REQUESTED and WAITING, waits durably for the decision (a signal persisted in
   * PostgreSQL) or its timeout, emits APPROVAL_DECISION and returns the outcome. Deciding what a
   * denial means is the caller's job.
   */
  requestApproval(request: ApprovalRequest): Promise<ApprovalOutcome>;

  /**
   * Earlier turns of the session, for the agent's input. The session issue fills it (history
   * window, primers/recents, compression); until then it returns [].
   */
  loadSessionHistory(): Promise<ChatMessage[]>;
}

export interface FlowOutcome {
  result: string;
  modelUsed: string;
  provider: string;
  usage: { inputTokens: number; outputTokens: number; totalTokens: number; costUsd: number };
  agentsUsed: number;
  toolsInvoked: number;
  /** The mode the run used, response form. */
  mode: "EXECUTION_MODE_SIMPLE" | "EXECUTION_MODE_STANDARD" | "EXECUTION_MODE_COMPLEX";
}

/**
 * Failure a flow raises to end the task as FAILED with that error type (e.g. LLM_ERROR,
 * TOOL_EXECUTION_FAILED, INVALID_INPUT, APPROVAL_DENIED). Cancellation and timeouts are the
 * runtime's: flows just let the abort propagate.
 */
export class TaskFailure extends Error {
  readonly errorType: string;
  readonly retryCount: number;
  readonly maxRetries: number;
  constructor(
    errorType: string,
    message: string,
    options: { cause?: unknown; retryCount?: number; maxRetries?: number } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "TaskFailure";
    this.errorType = errorType;
    this.retryCount = options.retryCount ?? 0;
    this.maxRetries = options.maxRetries ?? 0;
  }
}

/**
 * The entry point of every task: emits WORKFLOW_STARTED (seq 1, in its first step), picks the
 * mode, runs it and returns the outcome. The runtime then writes the final status and the
 * terminal event (WORKFLOW_COMPLETED, or ERROR_OCCURRED on failure/cancel/timeout).
 */
export type TaskFlow = (ctx: FlowContext) => Promise<FlowOutcome>;
