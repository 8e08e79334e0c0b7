import { z } from "zod";
import "@tog/edge"; // extends zod with .openapi()
import { MODEL_TIERS, type ModelTier } from "@tog/catalog";
import { describeValue } from "../describe-value.ts";

// The `context` of a submission (docs/api.md "Submitting a task"): the recognized keys, their
// rules and their defaults, in one schema used at both ends. The gateway validates a request
// with it (every rule words the 400 text) and stores the normalized form; the orchestrator reads
// that form back with the same schema (`readTaskContext`), so the keys and defaults cannot drift
// between the two.

export { MODEL_TIERS, type ModelTier };

export const NAME_MAX_CHARS = 255;
export const PROMPT_MAX_CHARS = 100_000;

/** Window-control bounds and defaults (docs/api.md "Submitting a task"). */
export const WINDOW_LIMITS = {
  history_window_size: { min: 1, max: 1000, default: 50 },
  primers_count: { min: 0, max: 1000, default: 5 },
  recents_count: { min: 0, max: 1000, default: 15 },
} as const;
export const RATIO_DEFAULTS = { compression_trigger_ratio: 0.8, compression_target_ratio: 0.5 } as const;

export const MODEL_CONTROL_KEYS = ["model_tier", "model_override", "provider_override"] as const;

export const nameString = (field: string) =>
  z
    .string({ error: `${field} must be a non-empty string of at most ${NAME_MAX_CHARS} characters` })
    .min(1, `${field} must be a non-empty string of at most ${NAME_MAX_CHARS} characters`)
    .max(NAME_MAX_CHARS, `${field} must be a non-empty string of at most ${NAME_MAX_CHARS} characters`);

export const tierOf = (field: string) =>
  z.enum(MODEL_TIERS, {
    error: (i) => `Invalid ${field}: ${describeValue(i.input)} (allowed: ${MODEL_TIERS.join(", ")})`,
  });

const integerIn = (field: string, min: number, max: number) => {
  const message = `${field} must be an integer from ${min} to ${max}`;
  return z.int({ error: message }).min(min, message).max(max, message);
};

const ratio = (field: string) => {
  const message = `${field} must be a number greater than 0 and at most 1`;
  return z.number({ error: message }).gt(0, message).lte(1, message);
};

const booleanOf = (field: string) => z.boolean({ error: `${field} must be a boolean` });

export const TaskContextSchema = z
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
      model_tier: tierOf("context.model_tier")
        .nullish()
        .openapi({ description: "Used when the top-level `model_tier` is absent." }),
      model_override: nameString("context.model_override")
        .nullish()
        .openapi({ description: "Used when the top-level value is absent." }),
      provider_override: nameString("context.provider_override")
        .nullish()
        .openapi({ description: "Used when the top-level value is absent." }),
      template: nameString("context.template").nullish().openapi({ description: "Template name." }),
      template_name: nameString("context.template_name").nullish().openapi({
        description:
          "Alias of `template`. Both given with different values → 400 (the reference silently prefers `template`); equal values are accepted.",
      }),
      template_version: nameString("context.template_version").nullish().openapi({ description: "Absent = latest." }),
      disable_ai: booleanOf("context.disable_ai").nullish().openapi({
        description: "Template-only mode; combined with any model control (top level or context) → 400. Default false.",
      }),
      history_window_size: integerIn("context.history_window_size", 1, 1000)
        .nullish()
        .openapi({ description: "Default 50." }),
      use_case_preset: nameString("context.use_case_preset")
        .nullish()
        .openapi({ description: "Window-control preset." }),
      primers_count: integerIn("context.primers_count", 0, 1000).nullish().openapi({ description: "Default 5." }),
      recents_count: integerIn("context.recents_count", 0, 1000).nullish().openapi({ description: "Default 15." }),
      compression_trigger_ratio: ratio("context.compression_trigger_ratio")
        .nullish()
        .openapi({ description: "Default 0.8." }),
      compression_target_ratio: ratio("context.compression_target_ratio")
        .nullish()
        .openapi({ description: "Default 0.5." }),
      require_approval: booleanOf("context.require_approval").nullish().openapi({
        description: "Ask for a human approval (POST /approvals/decision) before the agent acts. Default false.",
      }),
    },
    { error: "context must be an object" },
  )
  .openapi("TaskContext", {
    description:
      "Recognized keys are type-checked (a wrong type → 400 naming the key; null = absent); any other key is kept free-form and passed to the agent environment, tools and session memory.",
  });

/** The recognized context keys; every other key is free-form. */
export type TaskContextKey = keyof typeof TaskContextSchema.shape;
export const TASK_CONTEXT_KEYS = Object.keys(TaskContextSchema.shape) as TaskContextKey[];
const RECOGNIZED: ReadonlySet<string> = new Set(TASK_CONTEXT_KEYS);

/** A context as the gateway stores it: every recognized key with a default has its value. */
export interface TaskContext {
  role?: string | undefined;
  system_prompt?: string | undefined;
  prompt_params: Record<string, unknown>;
  model_tier?: ModelTier | undefined;
  model_override?: string | undefined;
  provider_override?: string | undefined;
  /** `template_name` folded in. */
  template?: string | undefined;
  template_version?: string | undefined;
  disable_ai: boolean;
  history_window_size: number;
  use_case_preset?: string | undefined;
  primers_count: number;
  recents_count: number;
  compression_trigger_ratio: number;
  compression_target_ratio: number;
  require_approval: boolean;
}

export interface ReadContext {
  context: TaskContext;
  /** The free-form keys, as given. */
  extra: Record<string, unknown>;
}

/**
 * A context's recognized keys checked one by one with the schema (a value the schema refuses,
 * or null, counts as absent), defaults filled, `template_name` folded into `template`; the other
 * keys returned apart. The gateway has refused invalid values already; a gRPC caller that skips
 * the gateway gets the defaults for them.
 */
export function readTaskContext(given: Record<string, unknown>): ReadContext {
  const shape = TaskContextSchema.shape;
  const value = <K extends TaskContextKey>(key: K): NonNullable<z.output<(typeof shape)[K]>> | undefined => {
    // Absent and null are absent for every key (all nullish, none with a default): no parse,
    // which for a context of a few keys was most of the orchestrator's zod work per submit.
    if (given[key] == null) return undefined;
    const parsed = shape[key].safeParse(given[key]);
    return parsed.success && parsed.data != null
      ? (parsed.data as NonNullable<z.output<(typeof shape)[K]>>)
      : undefined;
  };
  const extra: Record<string, unknown> = {};
  for (const [key, v] of Object.entries(given)) if (!RECOGNIZED.has(key)) extra[key] = v;
  return {
    extra,
    context: {
      role: value("role"),
      system_prompt: value("system_prompt"),
      prompt_params: value("prompt_params") ?? {},
      model_tier: value("model_tier"),
      model_override: value("model_override"),
      provider_override: value("provider_override"),
      template: value("template") ?? value("template_name"),
      template_version: value("template_version"),
      disable_ai: value("disable_ai") ?? false,
      history_window_size: value("history_window_size") ?? WINDOW_LIMITS.history_window_size.default,
      use_case_preset: value("use_case_preset"),
      primers_count: value("primers_count") ?? WINDOW_LIMITS.primers_count.default,
      recents_count: value("recents_count") ?? WINDOW_LIMITS.recents_count.default,
      compression_trigger_ratio: value("compression_trigger_ratio") ?? RATIO_DEFAULTS.compression_trigger_ratio,
      compression_target_ratio: value("compression_target_ratio") ?? RATIO_DEFAULTS.compression_target_ratio,
      require_approval: value("require_approval") ?? false,
    },
  };
}

/** The model controls a submission may give at the top level, over the context's. */
export type ModelControls = Partial<Record<(typeof MODEL_CONTROL_KEYS)[number], string | null | undefined>>;

/**
 * The context a validated submission is stored with: the free-form keys as they came, then every
 * recognized key that has a value (defaults filled); a top-level model control wins over the
 * context's. An absent tier stays absent, so the orchestrator applies the catalog's default tier
 * (DEFAULT_MODEL_TIER) instead of the gateway freezing one.
 */
export function normalizeTaskContext(
  given: Record<string, unknown> | null | undefined,
  top: ModelControls = {},
): Record<string, unknown> {
  const merged: Record<string, unknown> = { ...given };
  for (const key of MODEL_CONTROL_KEYS) if (top[key] != null) merged[key] = top[key];
  const { context, extra } = readTaskContext(merged);
  const stored: Record<string, unknown> = { ...extra };
  for (const [key, v] of Object.entries(context)) if (v !== undefined) stored[key] = v;
  return stored;
}
