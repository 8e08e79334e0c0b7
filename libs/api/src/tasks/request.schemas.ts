import { z } from "zod";
import { TASK_STATUSES, type TaskStatus } from "@tog/proto";
import { describeValue } from "../describe-value.ts";
import { SESSION_ID_MAX_CHARS } from "./submit-request.schema.ts";
import { NAME_MAX_CHARS } from "./task-context.ts";
import { booleanWord, emptyToUndefined, integerParam, MAX_OFFSET, optionalIntegerParam } from "../query-params.ts";

// Query parameters, path parameters and the small bodies of the task routes. Every rule carries
// its exact 400 text. In query strings an empty value (`?limit=`) is the same as leaving the
// parameter out; a repeated parameter is refused.

/** `CANCELED` is accepted as the other spelling of CANCELLED (docs/api.md "Statuses and modes"). */
const STATUS_ALIASES: Record<string, TaskStatus> = { CANCELED: "CANCELLED" };
const STATUS_FILTER_VALUES = [...TASK_STATUSES, "CANCELED"] as const;

/** Bare name, case-insensitive; the response form `TASK_STATUS_X` is accepted too. */
export function parseStatusFilter(value: string): TaskStatus | undefined {
  const upper = value.toUpperCase();
  const bare = upper.startsWith("TASK_STATUS_") ? upper.slice("TASK_STATUS_".length) : upper;
  if (STATUS_ALIASES[bare]) return STATUS_ALIASES[bare];
  return (TASK_STATUSES as readonly string[]).includes(bare) ? (bare as TaskStatus) : undefined;
}

const statusParam = z
  .preprocess(
    (v) => {
      const value = emptyToUndefined(v);
      return typeof value === "string" ? (parseStatusFilter(value) ?? value) : value;
    },
    z
      .enum(TASK_STATUSES, {
        error: (i) =>
          `Invalid status parameter: ${describeValue(i.input)} (allowed: ${STATUS_FILTER_VALUES.join(", ")})`,
      })
      .optional(),
  )
  .openapi({
    type: "string",
    enum: [...STATUS_FILTER_VALUES],
    description:
      "Bare status name, case-insensitive (`completed` works; `CANCELED` = `CANCELLED`; the response form `TASK_STATUS_X` is accepted too). Empty = no filter.",
  });

export const ListTasksQuery = z.object({
  limit: integerParam("limit", 1, 100, 20).openapi({ description: "Page size, 1–100.", default: 20 }),
  offset: integerParam("offset", 0, MAX_OFFSET, 0).openapi({ description: "Tasks to skip.", default: 0 }),
  status: statusParam,
  session_id: z
    .preprocess(
      emptyToUndefined,
      z
        .string({ error: "Invalid session_id parameter: must be given once" })
        .max(SESSION_ID_MAX_CHARS, `Invalid session_id parameter: at most ${SESSION_ID_MAX_CHARS} characters`)
        .optional(),
    )
    .openapi({
      type: "string",
      description: "Session UUID or external id; another user's or an unknown session lists nothing.",
    }),
});

export const TaskEventsQuery = z.object({
  limit: integerParam("limit", 1, 200, 50).openapi({ description: "Page size, 1–200.", default: 50 }),
  offset: integerParam("offset", 0, MAX_OFFSET, 0).openapi({
    description: "Events to skip (counted after `after_seq` when that is given).",
    default: 0,
  }),
  after_seq: optionalIntegerParam("after_seq", 0, Number.MAX_SAFE_INTEGER).openapi({
    description: "Seq cursor: only events with a greater seq. Pass the previous page's `next_after_seq`.",
  }),
});

export const TimelineQuery = z.object({
  include_payloads: z
    .preprocess((v) => {
      const value = emptyToUndefined(v);
      return booleanWord(value);
    }, z
      .boolean({ error: (i) => `Invalid include_payloads parameter: ${describeValue(i.input)} (allowed: true, false)` })
      .optional())
    .openapi({
      type: "boolean",
      description: "Adds each entry's `payload`. Accepts true/false/1/0; default false.",
      default: false,
    }),
});

export const TaskIdParams = z.object({
  id: z.string().openapi({ description: "Task id (UUID; anything else is 404 `Task not found`)." }),
});

export const REASON_MAX_CHARS = 1000;

export const CancelTaskBody = z
  .object(
    {
      reason: z
        .string({ error: `reason must be a string of at most ${REASON_MAX_CHARS} characters` })
        .max(REASON_MAX_CHARS, `reason must be a string of at most ${REASON_MAX_CHARS} characters`)
        .nullish()
        .openapi({
          description: `Human-readable, at most ${REASON_MAX_CHARS} characters; recorded with the cancellation.`,
        }),
    },
    { error: "Invalid request body: expected a JSON object" },
  )
  .openapi("CancelRequest");

export const TEXT_MAX_CHARS = 10_000;

const requiredString = (field: string) =>
  z
    .string({
      error: (i) => (i.input === undefined || i.input === null ? `${field} is required` : `${field} must be a string`),
    })
    .max(NAME_MAX_CHARS, `${field} must be at most ${NAME_MAX_CHARS} characters`)
    .refine((v) => v.trim() !== "", `${field} is required`);

const optionalText = (field: string, max: number) =>
  z
    .string({ error: `${field} must be a string of at most ${max} characters` })
    .max(max, `${field} must be a string of at most ${max} characters`)
    .nullish();

export const ApprovalDecisionBody = z
  .object(
    {
      workflow_id: requiredString("workflow_id").openapi({
        description: "The task id (a non-UUID → 404 `Task not found`).",
      }),
      approval_id: requiredString("approval_id").openapi({ description: "From the APPROVAL_REQUESTED event." }),
      approved: z
        .boolean({
          error: (i) =>
            i.input === undefined || i.input === null
              ? "approved is required"
              : "approved must be a boolean (true or false)",
        })
        .openapi({ description: "true approves, false denies." }),
      feedback: optionalText("feedback", TEXT_MAX_CHARS).openapi({ description: "Remark passed to the workflow." }),
      modified_action: optionalText("modified_action", TEXT_MAX_CHARS).openapi({
        description: "Replaces the proposed action.",
      }),
      run_id: optionalText("run_id", NAME_MAX_CHARS).openapi({
        description: "Echoed back; the workflow id is enough to find the run.",
      }),
      approved_by: z
        .string({ error: `approved_by must be a non-empty string of at most ${NAME_MAX_CHARS} characters` })
        .min(1, `approved_by must be a non-empty string of at most ${NAME_MAX_CHARS} characters`)
        .max(NAME_MAX_CHARS, `approved_by must be a non-empty string of at most ${NAME_MAX_CHARS} characters`)
        .nullish()
        .openapi({ description: "Recorded as the decider; default the authenticated user's id." }),
    },
    { error: "Invalid request body: expected a JSON object" },
  )
  .openapi("ApprovalDecisionRequest");
