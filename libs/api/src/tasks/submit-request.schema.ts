import { z } from "zod";
import { REQUEST_MODES } from "@tog/proto";
import { describeValue } from "../describe-value.ts";
import { MODEL_CONTROL_KEYS, TaskContextSchema, tierOf, nameString } from "./task-context.ts";

// The body of POST /tasks and POST /tasks/stream (docs/api.md "Submitting a task"). The schema both validates and
// documents; every rule carries the exact 400 text the client gets (the first problem found is
// reported). The context and its normalization (defaults, top level over context) are in
// task-context.ts.
//
// Conventions: `null` is the same as an absent field (JSON clients often send null for "unset");
// an empty string is a value and is checked like any other. Unknown top-level fields are
// ignored; unknown context keys are kept free-form.

export const QUERY_MAX_CHARS = 100_000;
export const SESSION_ID_MAX_CHARS = 255;

/** C0 controls, DEL and C1 controls. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: matching control characters is the point
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export const SubmitTaskBody = z
  .object(
    {
      query: z
        .string({
          error: (i) => (i.input === undefined || i.input === null ? "Query is required" : "query must be a string"),
        })
        .max(QUERY_MAX_CHARS, `query must be at most ${QUERY_MAX_CHARS} characters`)
        .refine((q) => q.trim() !== "", "Query is required")
        .openapi({ description: `Natural-language task; not blank, at most ${QUERY_MAX_CHARS} characters.` }),
      session_id: z
        .string({ error: `session_id must be a non-empty string of at most ${SESSION_ID_MAX_CHARS} characters` })
        .min(1, `session_id must be a non-empty string of at most ${SESSION_ID_MAX_CHARS} characters`)
        .max(
          SESSION_ID_MAX_CHARS,
          `session_id must be a non-empty string of at most ${SESSION_ID_MAX_CHARS} characters`,
        )
        // An identifier: it comes back in the X-Session-ID header and in logs.
        .refine((id) => !CONTROL_CHARS.test(id), "session_id must not contain control characters")
        .nullish()
        .openapi({
          description:
            "UUID or your own external id (kept as the session's external id; no control characters). Absent → a new session. " +
            "It comes back in `X-Session-ID`: as sent when it is printable ASCII, else percent-encoded UTF-8.",
        }),
      context: TaskContextSchema.nullish(),
      mode: z
        .enum(REQUEST_MODES, {
          error: (i) => `Invalid mode: ${describeValue(i.input)} (allowed: ${REQUEST_MODES.join(", ")})`,
        })
        .nullish()
        .openapi({ description: "Absent → automatic detection. Case-sensitive." }),
      model_tier: tierOf("model_tier").nullish().openapi({
        description:
          "Overrides `context.model_tier`. Absent everywhere → the catalog's default tier (DEFAULT_MODEL_TIER, `small`).",
      }),
      model_override: nameString("model_override")
        .nullish()
        .openapi({ description: "Canonical model name; overrides the context value." }),
      provider_override: nameString("provider_override")
        .nullish()
        .openapi({ description: "Forces the provider; overrides the context value." }),
    },
    { error: "Invalid request body: expected a JSON object" },
  )
  .superRefine((body, ctx) => {
    const context = body.context ?? {};
    if (context.disable_ai === true) {
      const present = [
        ...MODEL_CONTROL_KEYS.filter((k) => body[k] != null),
        ...MODEL_CONTROL_KEYS.filter((k) => context[k] != null).map((k) => `context.${k}`),
      ];
      if (present.length > 0) {
        ctx.addIssue({
          code: "custom",
          path: ["context", "disable_ai"],
          message: `disable_ai cannot be combined with model controls (found: ${present.join(", ")})`,
        });
      }
    }
    if (context.template != null && context.template_name != null && context.template !== context.template_name) {
      ctx.addIssue({
        code: "custom",
        path: ["context", "template_name"],
        message: "template and template_name name different templates; supply only one",
      });
    }
  })
  .openapi("TaskSubmission");

export type SubmitTaskBody = z.output<typeof SubmitTaskBody>;
