import type { SubmitTaskCommand } from "@tog/proto";
import type { ModelTier } from "@tog/catalog";
import { readTaskContext } from "@tog/api";
import type { TaskSpec } from "../runtime/flow-context.ts";

// From the gateway's normalized context to the spec a workflow runs, read with the same schema
// the gateway validated it with (libs/api task-context.ts). Keys outside the recognized list
// stay as metadata.

/** An empty string names nothing. */
const text = (v: string | undefined): string | undefined => (v === "" ? undefined : v);

/** `defaultTier`: the catalog default (DEFAULT_MODEL_TIER), for a submission without a tier. */
export function specFromCommand(
  command: Pick<SubmitTaskCommand, "query" | "mode" | "context">,
  defaultTier: ModelTier = "small",
): TaskSpec {
  const { context: c, extra } = readTaskContext(command.context);
  return {
    query: command.query,
    mode: command.mode,
    modelTier: c.model_tier ?? defaultTier,
    modelOverride: c.model_override,
    providerOverride: c.provider_override,
    role: c.role,
    systemPrompt: text(c.system_prompt),
    promptParams: c.prompt_params,
    template: c.template,
    templateVersion: c.template_version,
    disableAi: c.disable_ai,
    requireApproval: c.require_approval,
    metadata: extra,
    window: {
      historyWindowSize: c.history_window_size,
      primersCount: c.primers_count,
      recentsCount: c.recents_count,
      compressionTriggerRatio: c.compression_trigger_ratio,
      compressionTargetRatio: c.compression_target_ratio,
      useCasePreset: c.use_case_preset,
    },
  };
}
