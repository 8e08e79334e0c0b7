import { z } from "zod";
import { REQUEST_MODES } from "@tog/proto";
import { describeValue } from "../describe-value.ts";

// The body of POST /tasks and POST /tasks/stream (contract 4.1). The schema both validates and
// documents; every rule carries the exact 400 text the client gets (the first problem found is
// reported). Normalization (defaults, top level over context) is in submission.ts.
//
// Conventions: `null` is the same as an absent field (JSON clients often send null for "unset");
// an empty string is a value and is checked like any other. Unknown top-level fields are
// ignored; unknown context keys are kept free-form.

export const MODEL_TIERS = ["small", "medium", "large"] as const;
export type ModelTier = (typeof MODEL_TIERS)[number];

export const QUERY_MAX_CHARS = 100_000;
export const SESSION_ID_MAX_CHARS = 255;
export const NAME_MAX_CHARS = 255;
export const PROMPT_MAX_CHARS = 100_000;

/** Window-control bounds (defaults from contract §8). */
export const WINDOW_LIMITS = {
  history_window_size: { min: 1, max: 1000, default: 50 },
  primers_count: { min: 0, max: 1000, default: 5 },
  recents_count: { min: 0, max: 1000, default: 15 },
} as const;
export const RATIO_DEFAULTS = { compression_trigger_ratio: 0.8, compression_target_ratio: 0.5 } as const;

export const MODEL_CONTROL_KEYS = ["model_tier", "model_override", "provider_override"] as const;

const nameString = (field: string) =>
  z
    .string({ error: `${field} must be a non-empty string of at most ${NAME_MAX_CHARS} characters` })
    .min(1, `${field} must be a non-empty string of at most ${NAME_MAX_CHARS} characters`)
    .max(NAME_MAX_CHARS, `${field} must be a non-empty string of at most ${NAME_MAX_CHARS} characters`);

const tierOf = (field: string) =>
  z.enum(MODEL_TIERS, { error: (i) => `Invalid ${field}: ${describeValue(i.input)} (allowed: ${MODEL_TIERS.join(", ")})` });

const integerIn = (field: string, min: number, max: number) => {
  const message = `${field} must be an integer from ${min} to ${max}`;
  return z.int({ error: message }).min(min, message).max(max, message);
};

const ratio = (field: string) => {
  const message = `${field} must be a number greater than 0 and at most 1`;
  return z.number({ error: message }).gt(0, message).lte(1, message);
};

const booleanOf = (field: string) => z.boolean({ error: `${field} must be a boolean` });

const ContextSchema = z
  .looseObject(
    {
      role: nameString("context.role").nullish().openapi({ description: "Role preset name." }),
      system_prompt: z
        .string({ error: "context.system_prompt must be a string" })
        .max(PROMPT_MAX_CHARS, `context.system_prompt must be at most ${PROMPT_MAX_CHARS} characters`)
        .nullish()
        .openapi({ description: "Overrides the role prompt; `${var}` refers to `prompt_params`." }),
      prompt_params: z
        .record(z.string(), z.unknown(), { error: "context.prompt_params must be an object" })
        .nullish()
        .openapi({ description: "Parameters for prompts, tools, adapters and templates. Default `{}`." }),
      model_tier: tierOf("context.model_tier").nullish().openapi({ description: "Used when the top-level `model_tier` is absent." }),
      model_override: nameString("context.model_override").nullish().openapi({ description: "Used when the top-level value is absent." }),
      provider_override: nameString("context.provider_override").nullish().openapi({ description: "Used when the top-level value is absent." }),
      template: nameString("context.template").nullish().openapi({ description: "Template name." }),
      template_name: nameString("context.template_name")
        .nullish()
        .openapi({
          description:
            "Alias of `template`. Both given with different values → 400 (the reference silently prefers `template`); equal values are accepted.",
        }),
      template_version: nameString("context.template_version").nullish().openapi({ description: "Absent = latest." }),
      disable_ai: booleanOf("context.disable_ai")
        .nullish()
        .openapi({ description: "Template-only mode; combined with any model control (top level or context) → 400. Default false." }),
      history_window_size: integerIn("context.history_window_size", 1, 1000).nullish().openapi({ description: "Default 50." }),
      use_case_preset: nameString("context.use_case_preset").nullish().openapi({ description: "Window-control preset." }),
      primers_count: integerIn("context.primers_count", 0, 1000).nullish().openapi({ description: "Default 5." }),
      recents_count: integerIn("context.recents_count", 0, 1000).nullish().openapi({ description: "Default 15." }),
      compression_trigger_ratio: ratio("context.compression_trigger_ratio").nullish().openapi({ description: "Default 0.8." }),
      compression_target_ratio: ratio("context.compression_target_ratio").nullish().openapi({ description: "Default 0.5." }),
      require_approval: booleanOf("context.require_approval")
        .nullish()
        .openapi({ description: "Ask for a human approval (POST /approvals/decision) before the agent acts. Default false." }),
    },
    { error: "context must be an object" },
  )
  .openapi("TaskContext", {
    description:
      "Recognized keys are type-checked (a wrong type → 400 naming the key; null = absent); any other key is kept free-form and passed to the agent environment, tools and session memory.",
  });

/** C0 controls, DEL and C1 controls. */
const CONTROL_CHARS = /[\u0000-\u001f\u007f-\u009f]/;

export const SubmitTaskBody = z
  .object(
    {
      query: z
        .string({ error: (i) => (i.input === undefined || i.input === null ? "Query is required" : "query must be a string") })
        .max(QUERY_MAX_CHARS, `query must be at most ${QUERY_MAX_CHARS} characters`)
        .refine((q) => q.trim() !== "", "Query is required")
        .openapi({ description: `Natural-language task; not blank, at most ${QUERY_MAX_CHARS} characters.` }),
      session_id: z
        .string({ error: `session_id must be a non-empty string of at most ${SESSION_ID_MAX_CHARS} characters` })
        .min(1, `session_id must be a non-empty string of at most ${SESSION_ID_MAX_CHARS} characters`)
        .max(SESSION_ID_MAX_CHARS, `session_id must be a non-empty string of at most ${SESSION_ID_MAX_CHARS} characters`)
        // An identifier: it comes back in the X-Session-ID header and in logs.
        .refine((id) => !CONTROL_CHARS.test(id), "session_id must not contain control characters")
        .nullish()
        .openapi({
          description:
            "UUID or your own external id (kept as the session's external id; no control characters). Absent → a new session. " +
            "It comes back in `X-Session-ID`: as sent when it is printable ASCII, else percent-encoded UTF-8.",
        }),
      context: ContextSchema.nullish(),
      mode: z
        .enum(REQUEST_MODES, { error: (i) => `Invalid mode: ${describeValue(i.input)} (allowed: ${REQUEST_MODES.join(", ")})` })
        .nullish()
        .openapi({ description: "Absent → automatic detection. Case-sensitive." }),
      model_tier: tierOf("model_tier")
        .nullish()
        .openapi({ description: "Overrides `context.model_tier`. Absent everywhere → the catalog's default tier (DEFAULT_MODEL_TIER, `small`)." }),
      model_override: nameString("model_override").nullish().openapi({ description: "Canonical model name; overrides the context value." }),
      provider_override: nameString("provider_override").nullish().openapi({ description: "Forces the provider; overrides the context value." }),
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
