import { z } from "zod";
import "@tog/edge"; // extends zod with .openapi()
import { apiTaskStatus, EXECUTION_MODES, TASK_STATUSES } from "@tog/proto";
import { EVENT_ENVELOPE_FIELDS } from "../tasks/response.schemas.ts";

// Response bodies of the session routes, for the OpenAPI document (handlers check their output
// against the input types with `satisfies`).

const timestamp = () => z.string().openapi({ format: "date-time" });

/** Every status in its response form, then the form of an unknown one. */
const TASK_STATUS = z
  .enum([...TASK_STATUSES.map(apiTaskStatus), "TASK_STATUS_UNSPECIFIED"])
  .openapi({ description: "Written as everywhere in the API." });
const MODE = z.enum(EXECUTION_MODES).openapi({
  description:
    "The mode the run used; before it chose one, the requested mode's form (supervisor → COMPLEX), else STANDARD.",
});

const sessionCore = {
  session_id: z.string().openapi({ description: "The session's UUID." }),
  user_id: z.string(),
  external_id: z
    .string()
    .nullable()
    .openapi({ description: "The client's own id when the session was created with a non-UUID `session_id`." }),
  title: z.string().nullable().openapi({ description: "Set with PATCH; null until then." }),
  task_count: z.number().int(),
  tokens_used: z.number().int().openapi({ description: "Tokens of the session's finished tasks." }),
  token_budget: z.number().int().openapi({
    description: "Tokens all tasks of the session may use together (SESSION_TOKEN_BUDGET, default 1,000,000).",
  }),
  total_cost_usd: z.number(),
  created_at: timestamp(),
  updated_at: timestamp(),
  last_activity_at: timestamp().openapi({ description: "Last task submitted or finished in the session." }),
};

export const SessionSummarySchema = z.object(sessionCore).openapi("SessionSummary");

export const SessionListSchema = z
  .object({
    sessions: z
      .array(SessionSummarySchema)
      .openapi({ description: "Most recent activity first (last_activity_at, then session_id, descending)." }),
    total_count: z
      .number()
      .int()
      .openapi({ description: "All of your sessions that are not deleted, not only this page." }),
  })
  .openapi("SessionList");

export const SessionDetailSchema = z
  .object({
    ...sessionCore,
    context: z
      .record(z.string(), z.unknown())
      .openapi({ description: "Session context; mirrors `external_id` and `title`." }),
    tokens_remaining: z.number().int().openapi({ description: "token_budget − tokens_used, never below 0." }),
    expires_at: timestamp().nullable().openapi({
      description:
        "When the retention purge removes the session if nothing happens in it (last activity + SESSION_RETENTION_DAYS); null when kept forever.",
    }),
  })
  .openapi("SessionDetail");

export const SessionHistoryTaskSchema = z
  .object({
    task_id: z.string(),
    workflow_id: z.string().openapi({ description: "Equal to task_id." }),
    query: z.string(),
    status: TASK_STATUS,
    mode: MODE,
    result: z.string().nullable().openapi({ description: "The answer of a COMPLETED task; null otherwise." }),
    error_message: z.string().openapi({ description: "Empty when there is no error." }),
    error_type: z
      .string()
      .nullable()
      .openapi({ description: "BUDGET_EXCEEDED, LLM_ERROR, CANCELLED, TIMEOUT, …; null when none." }),
    model_used: z.string().nullable(),
    provider: z.string().nullable(),
    total_tokens: z
      .number()
      .int()
      .openapi({ description: "Usage is recorded when a task completes; 0 before and for failed tasks." }),
    input_tokens: z.number().int(),
    output_tokens: z.number().int(),
    total_cost_usd: z.number(),
    duration_ms: z.number().int().nullable().openapi({
      description: "Start to end of the run; null until it ended (and for a task cancelled before it started).",
    }),
    agents_used: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "From WORKFLOW_COMPLETED; null for tasks that did not complete." }),
    tools_invoked: z
      .number()
      .int()
      .nullable()
      .openapi({ description: "From WORKFLOW_COMPLETED; null for tasks that did not complete." }),
    created_at: timestamp(),
    started_at: timestamp().nullable(),
    completed_at: timestamp().nullable().openapi({ description: "When it reached a terminal state." }),
  })
  .openapi("SessionHistoryTask");

export const SessionHistorySchema = z
  .object({
    session_id: z.string(),
    tasks: z.array(SessionHistoryTaskSchema).openapi({ description: "Every task of the session, oldest first." }),
    total: z.number().int().openapi({ description: "Number of tasks (the length of `tasks`)." }),
  })
  .openapi("SessionHistory");

export const TurnEventSchema = z
  .object({
    ...EVENT_ENVELOPE_FIELDS,
    data: z
      .record(z.string(), z.unknown())
      .optional()
      .openapi({ description: "The event's payload; only with include_payload=true." }),
  })
  .openapi("SessionTurnEvent");

export const TurnSchema = z
  .object({
    turn: z.number().int().openapi({
      description:
        "Global turn number: offset + position in this page, counting from 1 (the session's first task is turn 1).",
    }),
    task_id: z.string(),
    user_query: z.string(),
    final_output: z.string().openapi({
      description:
        'The task\'s result; when that is empty, the output of its first LLM_OUTPUT event; "" when neither exists.',
    }),
    status: TASK_STATUS,
    timestamp: timestamp().openapi({ description: "When the task was submitted." }),
    events: z
      .array(TurnEventSchema)
      .openapi({ description: "The task's stored events in seq order, without LLM_PARTIAL." }),
    metadata: z.object({
      tokens_used: z.number().int().openapi({ description: "The task's recorded total tokens (0 when none)." }),
      execution_time_ms: z.number().int().openapi({ description: "Run start to end; 0 while it runs." }),
      agents_involved: z.array(z.string()).openapi({
        description: "Agent ids that emitted events, in order of first appearance, without `orchestrator`.",
      }),
    }),
  })
  .openapi("SessionTurn");

export const TurnsSchema = z
  .object({
    session_id: z.string(),
    count: z.number().int().openapi({ description: "Turns in this page (as `count` in GET /tasks/{id}/events)." }),
    total_count: z.number().int().openapi({ description: "All turns (tasks) of the session." }),
    limit: z.number().int(),
    offset: z.number().int(),
    turns: z.array(TurnSchema).openapi({ description: "Oldest first." }),
  })
  .openapi("SessionTurns");

export const SessionRenamedSchema = z
  .object({
    session_id: z.string(),
    external_id: z.string().nullable(),
    title: z.string().openapi({ description: "The title as stored (cleaned)." }),
    updated_at: timestamp(),
  })
  .openapi("SessionRenamed");
