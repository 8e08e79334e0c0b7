import { z } from "zod";
import type { EventType } from "./event-types.ts";

// One definition per payload: the zod schema. The TypeScript types are inferred from it, so
// emitters (type-checked `data`) and readers (runtime validation of stored events) can never
// disagree. Field names are those of docs/api.md "Event payloads" (generated from these schemas). Objects are strict:
// an emitter that misspells a field fails in tests instead of shipping an extra key.

const text = () => z.string();
const name = () => z.string().min(1);
const count = () => z.int().min(0);
const durationMs = () => z.int().min(0);
const usd = () => z.number().min(0);
const ratio = () => z.number().min(0).max(1);
const names = () => z.array(z.string().min(1));
const jsonObject = () => z.record(z.string(), z.json());

/** Any JSON value (tool results, workspace values, free-form details). */
export type JsonValue = z.output<ReturnType<typeof z.json>>;

/** Agent modes as requests spell them (3.2); WORKFLOW_STARTED reports the mode actually chosen. */
export const AGENT_MODES = ["simple", "standard", "complex", "supervisor"] as const;
export type AgentMode = (typeof AGENT_MODES)[number];

/**
 * The one vocabulary of `error_type` (ERROR_OCCURRED, ERROR_RECOVERY) and `error` (AGENT_FAILED).
 * The first five are the contract's common values; the rest name our terminal causes.
 * Extend it here, never with free strings at the emitter.
 */
export const ERROR_TYPES = [
  "BUDGET_EXCEEDED",
  "TIMEOUT",
  "TOOL_EXECUTION_FAILED",
  "LLM_ERROR",
  "INVALID_INPUT",
  "CANCELLED",
  "APPROVAL_DENIED",
  "APPROVAL_TIMEOUT",
  "SUBTASK_FAILED",
  "INTERNAL_ERROR",
] as const;
export type ErrorType = (typeof ERROR_TYPES)[number];

export const ERROR_SEVERITIES = ["info", "warning", "error", "critical"] as const;
export type ErrorSeverity = (typeof ERROR_SEVERITIES)[number];

/** Risk levels of tools and approvals. */
export const RISK_LEVELS = ["low", "medium", "high", "critical"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export const APPROVAL_DECISIONS = ["approved", "denied", "timeout"] as const;
export type ApprovalDecisionValue = (typeof APPROVAL_DECISIONS)[number];

/** Statuses a terminal ERROR_OCCURRED carries (COMPLETED ends with WORKFLOW_COMPLETED instead). */
export const FAILURE_STATUSES = ["FAILED", "TIMEOUT", "CANCELLED"] as const;
export type FailureStatus = (typeof FAILURE_STATUSES)[number];

export const workflowStartedSchema = z.strictObject({
  query: text(),
  mode: z.enum(AGENT_MODES),
  session_id: name(),
  estimated_complexity: ratio(),
});

export const workflowCompletedSchema = z.strictObject({
  result: text(),
  duration_ms: durationMs(),
  total_tokens: count(),
  total_cost_usd: usd(),
  /** Number of distinct agents that ran (2.7's `agents_involved` lists their names). */
  agents_used: count(),
  /** Number of tool calls made. */
  tools_invoked: count(),
});

export const agentStartedSchema = z.strictObject({
  role: name(),
  subtask: text(),
  tools_available: names(),
});

export const agentThinkingSchema = z.strictObject({
  thought: text(),
  next_action: text(),
  confidence: ratio(),
});

export const agentCompletedSchema = z.strictObject({
  result: text(),
  tokens_used: count(),
  cost_usd: usd(),
  duration_ms: durationMs(),
});

export const toolInvokedSchema = z.strictObject({
  tool_name: name(),
  tool_args: jsonObject(),
  timeout_seconds: z.number().positive(),
});

export const toolObservationSchema = z.strictObject({
  tool_name: name(),
  /** What the tool returned, as JSON (a calculator returns a number, a JSON tool an object). */
  result: z.json(),
  duration_ms: durationMs(),
});

export const teamMemberSchema = z.strictObject({
  agent_id: name(),
  role: name(),
  capabilities: names(),
});

export const teamRecruitedSchema = z.strictObject({
  team_size: count(),
  agents: z.array(teamMemberSchema),
});

export const teamRetiredSchema = z.strictObject({
  team_size: count(),
  duration_ms: durationMs(),
  total_tokens: count(),
  reason: text(),
});

export const teamStatusSchema = z.strictObject({
  active_agents: count(),
  idle_agents: count(),
  tasks_completed: count(),
  tasks_remaining: count(),
  coordination_mode: name(),
});

export const dependencySatisfiedSchema = z.strictObject({
  subtask_id: name(),
  satisfied_dependencies: names(),
  can_proceed: z.boolean(),
});

export const messageSentSchema = z.strictObject({
  to: name(),
  content: text(),
  message_type: name(),
});

export const messageReceivedSchema = z.strictObject({
  from: name(),
  content: text(),
  acknowledged: z.boolean(),
});

export const llmPromptSchema = z.strictObject({
  model: name(),
  prompt_length: count(),
  max_tokens: z.int().min(1),
  temperature: z.number().min(0).max(2),
  sanitized_prompt: text(),
});

export const llmPartialSchema = z.strictObject({
  chunk: text(),
  /** 0-based index of this chunk within its LLM call. */
  chunk_index: count(),
  total_tokens_so_far: count(),
});

export const llmOutputSchema = z.strictObject({
  output: text(),
  model: name(),
  tokens_used: count(),
  cost_usd: usd(),
  duration_ms: durationMs(),
});

export const progressSchema = z.strictObject({
  percentage: z.number().min(0).max(100),
  current_step: count(),
  total_steps: count(),
  current_task: text(),
});

export const dataProcessingSchema = z.strictObject({
  operation: name(),
  records_processed: count(),
  total_records: count(),
  processing_stage: name(),
});

export const waitingSchema = z.strictObject({
  waiting_for: name(),
  wait_reason: text(),
  /** null when the wait has no known bound. */
  estimated_wait_seconds: z.number().min(0).nullable(),
});

export const errorOccurredSchema = z
  .strictObject({
    error_type: z.enum(ERROR_TYPES),
    error_message: text(),
    recoverable: z.boolean(),
    retry_count: count(),
    max_retries: count(),
    /** Seconds until the retry, when one is scheduled. */
    retry_after: z.number().min(0).optional(),
    severity: z.enum(ERROR_SEVERITIES),
    /** Present (true) only on the event that ends the task; see terminal.ts. */
    terminal: z.literal(true).optional(),
    /** The final task status; present exactly when `terminal` is. */
    status: z.enum(FAILURE_STATUSES).optional(),
  })
  .refine((d) => (d.terminal === true) === (d.status !== undefined), {
    message: "terminal and status go together",
    path: ["status"],
  })
  .refine((d) => d.terminal !== true || d.recoverable === false, {
    message: "a terminal error is not recoverable",
    path: ["recoverable"],
  });

export const errorRecoverySchema = z.strictObject({
  error_type: z.enum(ERROR_TYPES),
  recovery_action: name(),
  attempt: z.int().min(1),
  max_attempts: z.int().min(1),
  success: z.boolean(),
});

export const approvalRequestedSchema = z.strictObject({
  approval_id: name(),
  tool_name: name(),
  operation: text(),
  risk_level: z.enum(RISK_LEVELS),
  timeout_seconds: z.number().positive(),
  details: jsonObject(),
});

export const approvalDecisionSchema = z.strictObject({
  approval_id: name(),
  decision: z.enum(APPROVAL_DECISIONS),
  /** The deciding user; `system` when the approval timed out. */
  approved_by: name(),
  /** When the decision was made (ISO 8601). */
  timestamp: z.iso.datetime({ offset: true }),
  /** The decision's feedback; "" when none. */
  comments: text(),
});

export const WORKSPACE_ACTIONS = ["set", "append", "delete"] as const;

export const workspaceUpdatedSchema = z.strictObject({
  key: name(),
  /** The new value; null after a delete. */
  value: z.json(),
  action: z.enum(WORKSPACE_ACTIONS),
});

export const roleAssignedSchema = z.strictObject({
  role: name(),
  capabilities: names(),
  tools: names(),
});

export const DELEGATION_PRIORITIES = ["low", "normal", "high"] as const;

export const delegationSchema = z.strictObject({
  to_agent: name(),
  task: text(),
  priority: z.enum(DELEGATION_PRIORITIES),
});

export const agentFailedSchema = z.strictObject({
  error: z.enum(ERROR_TYPES),
  error_message: text(),
  recoverable: z.boolean(),
});

/** The payload (`data`) schema of every type. */
export const EVENT_PAYLOAD_SCHEMAS = {
  WORKFLOW_STARTED: workflowStartedSchema,
  WORKFLOW_COMPLETED: workflowCompletedSchema,
  AGENT_STARTED: agentStartedSchema,
  AGENT_THINKING: agentThinkingSchema,
  AGENT_COMPLETED: agentCompletedSchema,
  TOOL_INVOKED: toolInvokedSchema,
  TOOL_OBSERVATION: toolObservationSchema,
  TEAM_RECRUITED: teamRecruitedSchema,
  TEAM_RETIRED: teamRetiredSchema,
  TEAM_STATUS: teamStatusSchema,
  DEPENDENCY_SATISFIED: dependencySatisfiedSchema,
  MESSAGE_SENT: messageSentSchema,
  MESSAGE_RECEIVED: messageReceivedSchema,
  LLM_PROMPT: llmPromptSchema,
  LLM_PARTIAL: llmPartialSchema,
  LLM_OUTPUT: llmOutputSchema,
  PROGRESS: progressSchema,
  DATA_PROCESSING: dataProcessingSchema,
  WAITING: waitingSchema,
  ERROR_OCCURRED: errorOccurredSchema,
  ERROR_RECOVERY: errorRecoverySchema,
  APPROVAL_REQUESTED: approvalRequestedSchema,
  APPROVAL_DECISION: approvalDecisionSchema,
  WORKSPACE_UPDATED: workspaceUpdatedSchema,
  ROLE_ASSIGNED: roleAssignedSchema,
  DELEGATION: delegationSchema,
  AGENT_FAILED: agentFailedSchema,
} as const satisfies Record<EventType, z.ZodType>;

/** `data` of each type: `emit<T extends EventType>(type: T, data: EventPayloads[T])`. */
export type EventPayloads = { [K in EventType]: z.output<(typeof EVENT_PAYLOAD_SCHEMAS)[K]> };

export type WorkflowStartedPayload = EventPayloads["WORKFLOW_STARTED"];
export type WorkflowCompletedPayload = EventPayloads["WORKFLOW_COMPLETED"];
export type AgentStartedPayload = EventPayloads["AGENT_STARTED"];
export type AgentThinkingPayload = EventPayloads["AGENT_THINKING"];
export type AgentCompletedPayload = EventPayloads["AGENT_COMPLETED"];
export type ToolInvokedPayload = EventPayloads["TOOL_INVOKED"];
export type ToolObservationPayload = EventPayloads["TOOL_OBSERVATION"];
export type TeamMember = z.output<typeof teamMemberSchema>;
export type TeamRecruitedPayload = EventPayloads["TEAM_RECRUITED"];
export type TeamRetiredPayload = EventPayloads["TEAM_RETIRED"];
export type TeamStatusPayload = EventPayloads["TEAM_STATUS"];
export type DependencySatisfiedPayload = EventPayloads["DEPENDENCY_SATISFIED"];
export type MessageSentPayload = EventPayloads["MESSAGE_SENT"];
export type MessageReceivedPayload = EventPayloads["MESSAGE_RECEIVED"];
export type LlmPromptPayload = EventPayloads["LLM_PROMPT"];
export type LlmPartialPayload = EventPayloads["LLM_PARTIAL"];
export type LlmOutputPayload = EventPayloads["LLM_OUTPUT"];
export type ProgressPayload = EventPayloads["PROGRESS"];
export type DataProcessingPayload = EventPayloads["DATA_PROCESSING"];
export type WaitingPayload = EventPayloads["WAITING"];
export type ErrorOccurredPayload = EventPayloads["ERROR_OCCURRED"];
export type ErrorRecoveryPayload = EventPayloads["ERROR_RECOVERY"];
export type ApprovalRequestedPayload = EventPayloads["APPROVAL_REQUESTED"];
export type ApprovalDecisionPayload = EventPayloads["APPROVAL_DECISION"];
export type WorkspaceUpdatedPayload = EventPayloads["WORKSPACE_UPDATED"];
export type RoleAssignedPayload = EventPayloads["ROLE_ASSIGNED"];
export type DelegationPayload = EventPayloads["DELEGATION"];
export type AgentFailedPayload = EventPayloads["AGENT_FAILED"];

/** The field names of each payload, in schema order (docs, tests). */
export function payloadFieldNames(type: EventType): string[] {
  return Object.keys(EVENT_PAYLOAD_SCHEMAS[type].shape);
}
