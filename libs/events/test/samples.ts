import { buildEvent, type EventPayloads, type EventType, type TaskEvent } from "../src/index.ts";

// One typed payload per type. The annotation makes the compiler prove that every type has a
// payload type and that each sample matches it; the tests validate the same objects with the
// zod schemas at runtime.
export const SAMPLE_PAYLOADS: { [K in EventType]: EventPayloads[K] } = {
  WORKFLOW_STARTED: {
    query: "What is 2+2?",
    mode: "simple",
    session_id: "7f1c0e3e-55a8-4f4b-9d36-6c1f7d0c2d11",
    estimated_complexity: 0.2,
  },
  WORKFLOW_COMPLETED: {
    result: "4",
    duration_ms: 120,
    total_tokens: 42,
    total_cost_usd: 0.0001,
    agents_used: 1,
    tools_invoked: 0,
  },
  AGENT_STARTED: { role: "generalist", subtask: "answer the question", tools_available: ["calculator"] },
  AGENT_THINKING: { thought: "This is arithmetic", next_action: "call the calculator", confidence: 0.9 },
  AGENT_COMPLETED: { result: "4", tokens_used: 42, cost_usd: 0.0001, duration_ms: 100 },
  TOOL_INVOKED: { tool_name: "calculator", tool_args: { expression: "2+2" }, timeout_seconds: 10 },
  TOOL_OBSERVATION: { tool_name: "calculator", result: 4, duration_ms: 2 },
  TEAM_RECRUITED: {
    team_size: 2,
    agents: [
      { agent_id: "analyst-1", role: "analyst", capabilities: ["analysis"] },
      { agent_id: "writer-1", role: "writer", capabilities: ["writing"] },
    ],
  },
  TEAM_RETIRED: { team_size: 2, duration_ms: 5000, total_tokens: 900, reason: "work finished" },
  TEAM_STATUS: {
    active_agents: 1,
    idle_agents: 1,
    tasks_completed: 1,
    tasks_remaining: 1,
    coordination_mode: "supervisor",
  },
  DEPENDENCY_SATISFIED: { subtask_id: "subtask-2", satisfied_dependencies: ["subtask-1"], can_proceed: true },
  MESSAGE_SENT: { to: "writer-1", content: "here are the figures", message_type: "request" },
  MESSAGE_RECEIVED: { from: "analyst-1", content: "here are the figures", acknowledged: true },
  LLM_PROMPT: {
    model: "offline-small",
    prompt_length: 12,
    max_tokens: 1024,
    temperature: 0.7,
    sanitized_prompt: "What is 2+2?",
  },
  LLM_PARTIAL: { chunk: "The answer", chunk_index: 0, total_tokens_so_far: 2 },
  LLM_OUTPUT: { output: "The answer is 4.", model: "offline-small", tokens_used: 42, cost_usd: 0, duration_ms: 30 },
  PROGRESS: { percentage: 50, current_step: 1, total_steps: 2, current_task: "synthesis" },
  DATA_PROCESSING: { operation: "aggregate", records_processed: 10, total_records: 20, processing_stage: "merge" },
  WAITING: { waiting_for: "approval", wait_reason: "tool needs a human decision", estimated_wait_seconds: null },
  ERROR_OCCURRED: {
    error_type: "LLM_ERROR",
    error_message: "provider returned 503",
    recoverable: true,
    retry_count: 1,
    max_retries: 3,
    retry_after: 2,
    severity: "warning",
  },
  ERROR_RECOVERY: { error_type: "LLM_ERROR", recovery_action: "retry", attempt: 2, max_attempts: 3, success: true },
  APPROVAL_REQUESTED: {
    approval_id: "appr-1",
    tool_name: "file_delete",
    operation: "delete /tmp/x",
    risk_level: "high",
    timeout_seconds: 300,
    details: { path: "/tmp/x" },
  },
  APPROVAL_DECISION: {
    approval_id: "appr-1",
    decision: "approved",
    approved_by: "user-1",
    timestamp: "2026-01-02T03:04:05.678Z",
    comments: "",
  },
  WORKSPACE_UPDATED: { key: "figures", value: { revenue: 10 }, action: "set" },
  ROLE_ASSIGNED: { role: "analyst", capabilities: ["analysis"], tools: ["calculator"] },
  DELEGATION: { to_agent: "analyst-1", task: "compute the figures", priority: "normal" },
  AGENT_FAILED: { error: "TOOL_EXECUTION_FAILED", error_message: "division by zero", recoverable: false },
};

export const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
export const AT = Date.UTC(2026, 0, 2, 3, 4, 5, 678);

export function sampleEvent<T extends EventType>(
  type: T,
  seq = 1,
  data: EventPayloads[T] = SAMPLE_PAYLOADS[type],
): TaskEvent<T> {
  return buildEvent({
    workflow_id: "wf-1",
    type,
    agent_id: "simple-agent",
    message: `sample ${type}`,
    seq,
    trace_id: TRACE_ID,
    data,
    at: AT,
  });
}
