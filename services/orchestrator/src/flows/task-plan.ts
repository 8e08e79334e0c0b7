import { ValidationError } from "@tog/core";
import { isModelTier, MODEL_TIERS, type Catalog, type ModelTier } from "@tog/catalog";
import type { AgentMode } from "@tog/events";
import { estimateComplexity } from "@tog/providers";
import type { LlmRouter } from "@tog/providers";
import type { ToolRegistry } from "@tog/tools";
import type { TaskSpec } from "../runtime/flow-context.ts";
import { interpolate } from "./interpolate.ts";
import { resolveRole, type RolePreset } from "./roles.ts";
import { renderTemplate, resolveTemplate } from "./templates.ts";
import { validateUseCasePreset } from "../sessions/presets.ts";

// Everything a run derives from its spec before the first side effect: role, prompts, template,
// model selection, complexity and mode. Pure: the same spec always gives the same plan, so it
// is computed outside steps and a replay takes the same path.

export interface ModelSelection {
  tier: ModelTier;
  modelOverride?: string | undefined;
  providerOverride?: string | undefined;
}

export interface RenderedTemplate {
  name: string;
  version: string;
  text: string;
  references: number;
  replaced: number;
}

export interface TaskPlan {
  query: string;
  role: RolePreset;
  /** system_prompt with `${var}` replaced, when the request set one (it replaces role prompts). */
  customSystemPrompt: string | undefined;
  /** Free-form context keys for the agents, as a system-prompt paragraph ("" when none). */
  contextNote: string;
  /** The user prompt of the agents: the rendered template, else the query. */
  prompt: string;
  template: RenderedTemplate | undefined;
  disableAi: boolean;
  selection: ModelSelection;
  /** Offline heuristic score of the prompt, 0..1 (WORKFLOW_STARTED estimated_complexity). */
  complexity: number;
  /** Requested mode, else detected from the complexity; `simple` for template-only runs. */
  mode: AgentMode;
}

const MAX_CONTEXT_NOTE = 2_000;

/** Throws ValidationError for an unknown role, template or template version, or disable_ai without a template. */
export function planTask(spec: TaskSpec): TaskPlan {
  const parts = resolveTask(spec);
  const estimate = estimateComplexity(parts.prompt);
  return {
    ...parts,
    complexity: estimate.complexity_score,
    mode: spec.disableAi ? "simple" : (spec.mode ?? estimate.mode),
  };
}

/** Everything of the plan that can be refused, without the complexity estimate (not needed to validate). */
function resolveTask(spec: TaskSpec): Omit<TaskPlan, "complexity" | "mode"> {
  const role = resolveRole(spec.role);
  if (spec.templateVersion !== undefined && spec.template === undefined) {
    throw new ValidationError("template_version requires template");
  }
  if (spec.disableAi && spec.template === undefined) {
    throw new ValidationError("disable_ai requires a template (context.template)");
  }
  let template: RenderedTemplate | undefined;
  if (spec.template !== undefined) {
    const resolved = resolveTemplate(spec.template, spec.templateVersion);
    const rendered = renderTemplate(resolved.version, spec.promptParams, spec.query);
    template = { name: resolved.template.name, version: resolved.version.version, ...rendered };
  }
  const customSystemPrompt =
    spec.systemPrompt === undefined
      ? undefined
      : interpolate(spec.systemPrompt, { ...spec.promptParams, query: spec.query }).text;
  const prompt = template?.text ?? spec.query;
  return {
    query: spec.query,
    role,
    customSystemPrompt,
    contextNote: contextNote(spec.metadata),
    prompt,
    template,
    disableAi: spec.disableAi,
    selection: { tier: spec.modelTier, modelOverride: spec.modelOverride, providerOverride: spec.providerOverride },
  };
}

/** The system prompt of an agent with this role in this task. */
export function systemPromptFor(plan: TaskPlan, role: RolePreset): string {
  const base = plan.customSystemPrompt ?? role.systemPrompt;
  return plan.contextNote === "" ? base : `${base}\n\n${plan.contextNote}`;
}

function contextNote(metadata: Readonly<Record<string, unknown>>): string {
  if (Object.keys(metadata).length === 0) return "";
  let json = JSON.stringify(metadata);
  if (json.length > MAX_CONTEXT_NOTE) json = `${json.slice(0, MAX_CONTEXT_NOTE)}…`;
  return `Context supplied with the request (JSON): ${json}`;
}

export interface ValidateTaskSpecOptions {
  catalog: Catalog;
  /** With a router, model checks follow `llm.candidates` exactly (including "no API key configured"). */
  llm?: Pick<LlmRouter, "candidates"> | undefined;
  /** Accepted so callers can pass the registry; roles only ever offer registered tools, so no check needs it yet. */
  tools?: ToolRegistry | undefined;
}

/**
 * Submit-time check of everything a run would otherwise fail on later: unknown role, template
 * or template version, disable_ai without a template, unknown use_case_preset, unknown/disabled model_override,
 * unknown provider_override or one without a model in the tier. Throws ValidationError (400).
 */
export function validateTaskSpec(spec: TaskSpec, options: ValidateTaskSpecOptions): void {
  const plan = resolveTask(spec);
  validateUseCasePreset(spec.window.useCasePreset);
  if (plan.disableAi) return;
  checkModelSelection(plan.selection, options);
}

export function checkModelSelection(selection: ModelSelection, options: ValidateTaskSpecOptions): void {
  if (options.llm) {
    options.llm.candidates(selection);
    return;
  }
  // Without a router (a process that holds no provider keys): the catalog part of the same rules.
  const { catalog } = options;
  if (!isModelTier(selection.tier))
    throw new ValidationError(`Invalid model tier: ${String(selection.tier)} (allowed: ${MODEL_TIERS.join(", ")})`);
  if (selection.modelOverride !== undefined) {
    const m = catalog.model(selection.modelOverride);
    if (!m) throw new ValidationError(`Unknown model: ${selection.modelOverride}`);
    if (!m.enabled) throw new ValidationError(`Model ${m.id} is disabled`);
    return;
  }
  if (selection.providerOverride !== undefined) {
    const p = catalog.provider(selection.providerOverride);
    if (!p) throw new ValidationError(`Unknown provider: ${selection.providerOverride}`);
    if (!catalog.models({ tier: selection.tier }).some((m) => m.enabled && m.provider === p.name)) {
      throw new ValidationError(`Provider ${p.name} has no enabled model in tier ${selection.tier}`);
    }
  }
}
