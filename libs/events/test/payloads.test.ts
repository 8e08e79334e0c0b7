import { describe, expect, expectTypeOf, it } from "vitest";
import {
  EVENT_PAYLOAD_SCHEMAS,
  EVENT_TYPES,
  payloadFieldNames,
  terminalErrorData,
  type EventPayloads,
  type ErrorOccurredPayload,
} from "../src/index.ts";
import { SAMPLE_PAYLOADS } from "./samples.ts";

// Payload field names as the API documents them (docs/api.md "Event payloads"; ERROR_OCCURRED adds our terminal
// marker).
const CONTRACT_FIELDS: Record<string, string[]> = {
  WORKFLOW_STARTED: ["query", "mode", "session_id", "estimated_complexity"],
  WORKFLOW_COMPLETED: ["result", "duration_ms", "total_tokens", "total_cost_usd", "agents_used", "tools_invoked"],
  AGENT_STARTED: ["role", "subtask", "tools_available"],
  AGENT_THINKING: ["thought", "next_action", "confidence"],
  AGENT_COMPLETED: ["result", "tokens_used", "cost_usd", "duration_ms"],
  TOOL_INVOKED: ["tool_name", "tool_args", "timeout_seconds"],
  TOOL_OBSERVATION: ["tool_name", "result", "duration_ms"],
  TEAM_RECRUITED: ["team_size", "agents"],
  TEAM_RETIRED: ["team_size", "duration_ms", "total_tokens", "reason"],
  TEAM_STATUS: ["active_agents", "idle_agents", "tasks_completed", "tasks_remaining", "coordination_mode"],
  DEPENDENCY_SATISFIED: ["subtask_id", "satisfied_dependencies", "can_proceed"],
  MESSAGE_SENT: ["to", "content", "message_type"],
  MESSAGE_RECEIVED: ["from", "content", "acknowledged"],
  LLM_PROMPT: ["model", "prompt_length", "max_tokens", "temperature", "sanitized_prompt"],
  LLM_PARTIAL: ["chunk", "chunk_index", "total_tokens_so_far"],
  LLM_OUTPUT: ["output", "model", "tokens_used", "cost_usd", "duration_ms"],
  PROGRESS: ["percentage", "current_step", "total_steps", "current_task"],
  DATA_PROCESSING: ["operation", "records_processed", "total_records", "processing_stage"],
  WAITING: ["waiting_for", "wait_reason", "estimated_wait_seconds"],
  ERROR_OCCURRED: [
    "error_type",
    "error_message",
    "recoverable",
    "retry_count",
    "max_retries",
    "retry_after",
    "severity",
    "terminal",
    "status",
  ],
  ERROR_RECOVERY: ["error_type", "recovery_action", "attempt", "max_attempts", "success"],
  APPROVAL_REQUESTED: ["approval_id", "tool_name", "operation", "risk_level", "timeout_seconds", "details"],
  APPROVAL_DECISION: ["approval_id", "decision", "approved_by", "timestamp", "comments"],
  WORKSPACE_UPDATED: ["key", "value", "action"],
  ROLE_ASSIGNED: ["role", "capabilities", "tools"],
  DELEGATION: ["to_agent", "task", "priority"],
  AGENT_FAILED: ["error", "error_message", "recoverable"],
};

describe("payload schemas", () => {
  it("exist for every type with exactly the contract's field names", () => {
    expect(Object.keys(EVENT_PAYLOAD_SCHEMAS).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) expect(payloadFieldNames(type), type).toEqual(CONTRACT_FIELDS[type]);
  });

  it.each(EVENT_TYPES)("%s: the typed sample passes its schema unchanged", (type) => {
    const parsed = EVENT_PAYLOAD_SCHEMAS[type].parse(SAMPLE_PAYLOADS[type]);
    expect(parsed).toEqual(SAMPLE_PAYLOADS[type]);
  });

  it.each(EVENT_TYPES)("%s: an unknown key and a missing required key are refused", (type) => {
    const schema = EVENT_PAYLOAD_SCHEMAS[type];
    const sample = SAMPLE_PAYLOADS[type] as Record<string, unknown>;
    expect(schema.safeParse({ ...sample, unexpected_field: 1 }).success).toBe(false);
    const [first] = Object.keys(sample);
    const { [first!]: _dropped, ...missing } = sample;
    expect(schema.safeParse(missing).success).toBe(false);
  });

  it("checks value ranges and vocabularies", () => {
    const s = EVENT_PAYLOAD_SCHEMAS;
    expect(
      s.WORKFLOW_STARTED.safeParse({ ...SAMPLE_PAYLOADS.WORKFLOW_STARTED, estimated_complexity: 1.2 }).success,
    ).toBe(false);
    expect(s.WORKFLOW_STARTED.safeParse({ ...SAMPLE_PAYLOADS.WORKFLOW_STARTED, mode: "auto" }).success).toBe(false);
    expect(s.LLM_PARTIAL.safeParse({ ...SAMPLE_PAYLOADS.LLM_PARTIAL, chunk_index: -1 }).success).toBe(false);
    expect(s.LLM_PARTIAL.safeParse({ ...SAMPLE_PAYLOADS.LLM_PARTIAL, total_tokens_so_far: 1.5 }).success).toBe(false);
    expect(s.APPROVAL_DECISION.safeParse({ ...SAMPLE_PAYLOADS.APPROVAL_DECISION, decision: "rejected" }).success).toBe(
      false,
    );
    for (const decision of ["approved", "denied", "timeout"]) {
      expect(s.APPROVAL_DECISION.safeParse({ ...SAMPLE_PAYLOADS.APPROVAL_DECISION, decision }).success).toBe(true);
    }
    expect(
      s.APPROVAL_DECISION.safeParse({ ...SAMPLE_PAYLOADS.APPROVAL_DECISION, timestamp: "yesterday" }).success,
    ).toBe(false);
    expect(
      s.APPROVAL_REQUESTED.safeParse({ ...SAMPLE_PAYLOADS.APPROVAL_REQUESTED, risk_level: "extreme" }).success,
    ).toBe(false);
    expect(s.ERROR_OCCURRED.safeParse({ ...SAMPLE_PAYLOADS.ERROR_OCCURRED, error_type: "OOPS" }).success).toBe(false);
    const { retry_after: _r, ...withoutRetryAfter } = SAMPLE_PAYLOADS.ERROR_OCCURRED;
    expect(s.ERROR_OCCURRED.safeParse(withoutRetryAfter).success).toBe(true);
    expect(
      s.TOOL_OBSERVATION.safeParse({ ...SAMPLE_PAYLOADS.TOOL_OBSERVATION, result: { rows: [1, "a", null] } }).success,
    ).toBe(true);
    expect(s.TOOL_INVOKED.safeParse({ ...SAMPLE_PAYLOADS.TOOL_INVOKED, tool_args: "2+2" }).success).toBe(false);
  });

  it("keeps the terminal marker of ERROR_OCCURRED consistent", () => {
    const s = EVENT_PAYLOAD_SCHEMAS.ERROR_OCCURRED;
    const terminal = terminalErrorData({
      status: "TIMEOUT",
      error_type: "TIMEOUT",
      error_message: "Task exceeded 600 s",
    });
    expect(s.parse(terminal)).toEqual(terminal);
    expect(terminal).toMatchObject({ recoverable: false, severity: "critical", terminal: true, status: "TIMEOUT" });
    expect(s.safeParse({ ...terminal, recoverable: true }).success).toBe(false);
    expect(s.safeParse({ ...SAMPLE_PAYLOADS.ERROR_OCCURRED, status: "FAILED" }).success).toBe(false);
    expect(s.safeParse({ ...SAMPLE_PAYLOADS.ERROR_OCCURRED, recoverable: false, terminal: true }).success).toBe(false);
    expect(s.safeParse({ ...terminal, status: "COMPLETED" }).success).toBe(false);
  });

  it("types emit() calls against the payload map", () => {
    const emitted: unknown[] = [];
    function emit<T extends keyof EventPayloads>(type: T, data: EventPayloads[T]): void {
      emitted.push([type, data]);
    }
    emit("LLM_PARTIAL", { chunk: "x", chunk_index: 0, total_tokens_so_far: 1 });
    // @ts-expect-error -- a field of another type is a compile error
    emit("LLM_PARTIAL", { chunk: "x", chunk_index: 0, total_tokens: 1 });
    // @ts-expect-error -- decision is a closed vocabulary
    emit("APPROVAL_DECISION", { ...SAMPLE_PAYLOADS.APPROVAL_DECISION, decision: "rejected" });
    expectTypeOf<EventPayloads["ERROR_OCCURRED"]>().toEqualTypeOf<ErrorOccurredPayload>();
    expectTypeOf<EventPayloads["APPROVAL_DECISION"]["decision"]>().toEqualTypeOf<"approved" | "denied" | "timeout">();
    expectTypeOf<EventPayloads["ERROR_OCCURRED"]["retry_after"]>().toEqualTypeOf<number | undefined>();
    expect(emitted).toHaveLength(3);
  });
});
