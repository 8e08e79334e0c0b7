import type { ErrorOccurredPayload, ErrorType, FailureStatus } from "./payloads.ts";

// Every task's stream ends with exactly one terminal event, and it is the last one (highest
// seq) of that task:
//   COMPLETED                   → WORKFLOW_COMPLETED
//   FAILED / TIMEOUT / CANCELLED → ERROR_OCCURRED with data.terminal = true, data.status = the
//                                  status, recoverable = false, severity = "critical"
// A stream closes right after it. Child tasks write into their parent's stream (own agent_id)
// and end with AGENT_COMPLETED or AGENT_FAILED, never with a terminal event, so the parent's
// stream cannot close early.

export const TERMINAL_STATUSES = ["COMPLETED", "FAILED", "TIMEOUT", "CANCELLED"] as const;
export type TerminalStatus = (typeof TERMINAL_STATUSES)[number];

const TERMINAL: ReadonlySet<string> = new Set(TERMINAL_STATUSES);

/** True for a task status a task never leaves (bare form, as stored: `COMPLETED`, not `TASK_STATUS_COMPLETED`). */
export function isTerminalStatus(status: string): status is TerminalStatus {
  return TERMINAL.has(status);
}

/** The least a stream must look at: works on a parsed event without validating it. */
interface EventLike {
  type: string;
  data?: unknown;
}

/** True for the event that ends a task's stream. Two comparisons; no validation. */
export function isTerminalEvent(event: EventLike): boolean {
  if (event.type === "WORKFLOW_COMPLETED") return true;
  return event.type === "ERROR_OCCURRED" && (event.data as { terminal?: unknown } | undefined)?.terminal === true;
}

/** The final status an event announces, or null when it is not terminal. */
export function terminalStatusOf(event: EventLike): TerminalStatus | null {
  if (event.type === "WORKFLOW_COMPLETED") return "COMPLETED";
  if (!isTerminalEvent(event)) return null;
  return (event.data as { status: FailureStatus }).status;
}

export interface TerminalErrorInput {
  status: FailureStatus;
  error_type: ErrorType;
  error_message: string;
  retry_count?: number;
  max_retries?: number;
}

/** `data` of the ERROR_OCCURRED that ends a FAILED, TIMEOUT or CANCELLED task. */
export function terminalErrorData(input: TerminalErrorInput): ErrorOccurredPayload {
  return {
    error_type: input.error_type,
    error_message: input.error_message,
    recoverable: false,
    retry_count: input.retry_count ?? 0,
    max_retries: input.max_retries ?? 0,
    severity: "critical",
    terminal: true,
    status: input.status,
  };
}
