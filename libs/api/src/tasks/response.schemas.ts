import { z } from "zod";
import { API_TASK_STATUSES, EXECUTION_MODES } from "@tog/proto";

// Response bodies of the task routes, for the OpenAPI document (handlers check their output
// against the input types with `satisfies`).

export { API_TASK_STATUSES };
export const API_EXECUTION_MODES = EXECUTION_MODES;

const timestamp = () => z.string().openapi({ format: "date-time" });
const status = () => z.enum(API_TASK_STATUSES);
const mode = () =>
  z.enum(API_EXECUTION_MODES).openapi({
    description:
      "Mode the run uses. Before a run of an automatic-mode task has chosen one: EXECUTION_MODE_STANDARD; a requested mode shows as its value (supervisor → EXECUTION_MODE_COMPLEX).",
  });

export const TaskSubmittedSchema = z
  .object({
    task_id: z.string().openapi({ description: "Also the workflow id (UUID v4)." }),
    status: z.literal("STATUS_CODE_OK"),
    message: z.string().openapi({ example: "Task submitted successfully" }),
    created_at: timestamp(),
  })
  .openapi("TaskSubmitted");

export const StreamSubmittedSchema = z
  .object({
    task_id: z.string(),
    workflow_id: z.string().openapi({ description: "Equal to task_id." }),
    stream_url: z.string().openapi({ example: "/api/v1/stream/sse?workflow_id=0b0c…" }),
  })
  .openapi("StreamSubmitted");

export const TaskDetailSchema = z
  .object({
    task_id: z.string(),
    status: status(),
    result: z.string().optional().openapi({ description: "Raw model output; only when COMPLETED." }),
    response: z
      .union([z.record(z.string(), z.unknown()), z.array(z.unknown())])
      .optional()
      .openapi({ description: "`result` parsed, only when it is a JSON object or array." }),
    error: z.string().openapi({ description: "Empty string when there is no error." }),
    created_at: timestamp(),
    updated_at: timestamp(),
    query: z.string(),
    session_id: z.string().openapi({ description: "The session's internal UUID." }),
    mode: mode(),
    model_used: z.string().optional().openapi({ description: "Only when COMPLETED." }),
    provider: z.string().optional().openapi({ description: "Only when COMPLETED." }),
    usage: z
      .object({
        total_tokens: z.number().int(),
        input_tokens: z.number().int(),
        output_tokens: z.number().int(),
        estimated_cost: z.number().openapi({ description: "USD." }),
      })
      .optional()
      .openapi({ description: "Only when COMPLETED." }),
  })
  .openapi("TaskDetail");

export const TaskSummarySchema = z
  .object({
    task_id: z.string(),
    query: z.string(),
    status: status(),
    mode: mode(),
    created_at: timestamp(),
    completed_at: timestamp()
      .nullable()
      .openapi({ description: "When the task reached a terminal state; null before." }),
    total_token_usage: z
      .object({
        total_tokens: z.number().int(),
        cost_usd: z.number(),
        prompt_tokens: z.number().int(),
        completion_tokens: z.number().int(),
      })
      .nullable()
      .openapi({ description: "Null for tasks without recorded usage (any status)." }),
  })
  .openapi("TaskSummary");

export const TaskListSchema = z
  .object({
    tasks: z.array(TaskSummarySchema).openapi({ description: "Newest first." }),
    total_count: z.number().int().openapi({ description: "All tasks matching the filters, not only this page." }),
  })
  .openapi("TaskList");

/**
 * The fields every event of libs/events has before its `data` (its envelope), as responses
 * describe them; `stream_id` and `trace_id` are added where a response carries them.
 */
export const EVENT_ENVELOPE_FIELDS = {
  workflow_id: z.string(),
  type: z.string(),
  agent_id: z.string(),
  message: z.string(),
  timestamp: timestamp(),
  seq: z.number().int(),
};

/** The stored event (libs/events `TaskEvent`), served exactly as it was emitted. */
export const TaskEventSchema = z
  .object({
    ...EVENT_ENVELOPE_FIELDS,
    stream_id: z.string().openapi({ description: "`<emit millis>-<seq>`." }),
    trace_id: z.string().openapi({ description: "W3C trace id of the task." }),
    data: z.record(z.string(), z.unknown()),
  })
  .openapi("TaskEvent");

export const TaskEventsPageSchema = z
  .object({
    workflow_id: z.string(),
    events: z.array(TaskEventSchema).openapi({ description: "In seq order; LLM_PARTIAL included." }),
    count: z.number().int().openapi({ description: "Events in this page." }),
    total_count: z.number().int().openapi({ description: "All stored events of the task." }),
    next_after_seq: z.number().int().nullable().openapi({
      description: "Seq of the page's last event (pass as `after_seq` for the next page); null for an empty page.",
    }),
  })
  .openapi("TaskEventsPage");

export const TimelineEntrySchema = z
  .object({
    seq: z.number().int().openapi({ description: "1-based position in the timeline." }),
    kind: z
      .string()
      .openapi({ description: "start, plan, llm, tool, child, approval, timer, synthesis, team, finish, signal…" }),
    name: z.string(),
    agent_id: z.string(),
    status: z.string(),
    started_at: timestamp(),
    completed_at: timestamp().nullable(),
    duration_ms: z.number().int().nullable(),
    parent: z.string().nullable(),
    payload: z
      .unknown()
      .optional()
      .openapi({ description: "Only with include_payloads=true (null when the entry has none)." }),
  })
  .openapi("TimelineEntry");

export const TimelineSchema = z
  .object({
    workflow_id: z.string(),
    status: status(),
    events: z.array(TimelineEntrySchema).openapi({ description: "Ordered by started_at, then step key." }),
    stats: z.object({
      total: z.number().int(),
      duration_ms: z.number().int().nullable().openapi({
        description: "First entry's start to the last entry's end, once the task is terminal; null before.",
      }),
    }),
  })
  .openapi("Timeline");

export const CancelAcceptedSchema = z
  .object({ success: z.literal(true), message: z.string() })
  .openapi("CancelAccepted");

export const CancelConflictSchema = z
  .object({
    success: z.literal(false),
    message: z.string().openapi({ example: "Task is already COMPLETED" }),
    status: z
      .string()
      .openapi({ description: "The terminal status without the prefix: COMPLETED, FAILED, CANCELLED or TIMEOUT." }),
  })
  .openapi("CancelConflict");

export const ApprovalDecisionResultSchema = z
  .object({
    status: z.literal("sent"),
    success: z.literal(true),
    message: z.string().openapi({ example: "Approval decision sent for approval apr_123" }),
    workflow_id: z.string(),
    run_id: z.string().openapi({ description: "Empty when none was given." }),
    approval_id: z.string(),
  })
  .openapi("ApprovalDecisionResult");
