import type { SubmitTaskCommand } from "@tog/proto";
import type { ModelTier } from "@tog/catalog";
import type { TaskSpec } from "../runtime/workflow-context.ts";

// From the gateway's normalized context (contract 4.1 keys, defaults filled, model controls
// resolved) to the spec a workflow runs. Keys outside the contract's list stay as metadata.

const RECOGNIZED = new Set([
  "role",
  "system_prompt",
  "prompt_params",
  "model_tier",
  "model_override",
  "provider_override",
  "template",
  "template_name",
  "template_version",
  "disable_ai",
  "history_window_size",
  "use_case_preset",
  "primers_count",
  "recents_count",
  "compression_trigger_ratio",
  "compression_target_ratio",
  "require_approval",
]);

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);
const num = (v: unknown, fallback: number): number => (typeof v === "number" && Number.isFinite(v) ? v : fallback);

/** `defaultTier`: the catalog default (DEFAULT_MODEL_TIER), for a submission without a tier. */
export function specFromCommand(command: Pick<SubmitTaskCommand, "query" | "mode" | "context">, defaultTier: ModelTier = "small"): TaskSpec {
  const c = command.context;
  const metadata: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(c)) if (!RECOGNIZED.has(key)) metadata[key] = value;
  const promptParams = c.prompt_params;
  return {
    query: command.query,
    mode: command.mode,
    modelTier: (str(c.model_tier) ?? defaultTier) as ModelTier,
    modelOverride: str(c.model_override),
    providerOverride: str(c.provider_override),
    role: str(c.role),
    systemPrompt: str(c.system_prompt),
    promptParams: promptParams !== null && typeof promptParams === "object" && !Array.isArray(promptParams) ? (promptParams as Record<string, unknown>) : {},
    template: str(c.template) ?? str(c.template_name),
    templateVersion: str(c.template_version),
    disableAi: c.disable_ai === true,
    requireApproval: c.require_approval === true,
    metadata,
    window: {
      historyWindowSize: num(c.history_window_size, 50),
      primersCount: num(c.primers_count, 5),
      recentsCount: num(c.recents_count, 15),
      compressionTriggerRatio: num(c.compression_trigger_ratio, 0.8),
      compressionTargetRatio: num(c.compression_target_ratio, 0.5),
      useCasePreset: str(c.use_case_preset),
    },
  };
}
