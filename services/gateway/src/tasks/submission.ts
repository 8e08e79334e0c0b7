import type { SubmitTaskCommand } from "@tog/proto";
import { MODEL_CONTROL_KEYS, RATIO_DEFAULTS, WINDOW_LIMITS, type SubmitTaskBody } from "@tog/api";

// A validated submission turned into the orchestrator's command (contract 4.1):
// - every recognized context key with a default gets it (history_window_size 50,
//   primers_count 5, recents_count 15, compression_trigger_ratio 0.8, compression_target_ratio
//   0.5, disable_ai false, require_approval false, prompt_params {});
// - recognized keys without a default are left out when absent (null counts as absent);
// - model_tier/model_override/provider_override: the top-level value wins over the context's.
//   An absent tier stays absent, so the orchestrator applies the catalog's default tier
//   (DEFAULT_MODEL_TIER, `small` in the shipped catalog) instead of the gateway freezing one;
// - `template_name` is folded into `template` (validation already refused two different names);
// - free-form keys are kept as they came.

const OPTIONAL_CONTEXT_KEYS = ["role", "system_prompt", "template_version", "use_case_preset"] as const;

/** Keys this module rewrites; everything else in `context` is free-form and copied. */
const RECOGNIZED_KEYS = new Set<string>([
  ...OPTIONAL_CONTEXT_KEYS,
  ...MODEL_CONTROL_KEYS,
  "prompt_params",
  "template",
  "template_name",
  "disable_ai",
  "require_approval",
  ...Object.keys(WINDOW_LIMITS),
  ...Object.keys(RATIO_DEFAULTS),
]);

export function normalizeContext(body: SubmitTaskBody): Record<string, unknown> {
  const given: Record<string, unknown> = body.context ?? {};
  const context: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(given)) {
    if (!RECOGNIZED_KEYS.has(key)) context[key] = value;
  }
  for (const key of OPTIONAL_CONTEXT_KEYS) {
    if (given[key] != null) context[key] = given[key];
  }
  for (const key of MODEL_CONTROL_KEYS) {
    const value = body[key] ?? given[key];
    if (value != null) context[key] = value;
  }
  const template = given.template ?? given.template_name;
  if (template != null) context.template = template;
  context.prompt_params = given.prompt_params ?? {};
  context.disable_ai = given.disable_ai ?? false;
  context.require_approval = given.require_approval ?? false;
  for (const [key, limits] of Object.entries(WINDOW_LIMITS)) context[key] = given[key] ?? limits.default;
  for (const [key, value] of Object.entries(RATIO_DEFAULTS)) context[key] = given[key] ?? value;
  return context;
}

export function toSubmitCommand(userId: string, body: SubmitTaskBody, streaming: boolean): SubmitTaskCommand {
  return {
    userId,
    query: body.query,
    sessionId: body.session_id ?? undefined,
    mode: body.mode ?? undefined,
    context: normalizeContext(body),
    streaming,
  };
}
