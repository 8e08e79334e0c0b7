export { taskFlow } from "./task-flow.ts";
export {
  validateTaskSpec,
  planTask,
  systemPromptFor,
  type TaskPlan,
  type ModelSelection,
  type RenderedTemplate,
  type ValidateTaskSpecOptions,
} from "./task-plan.ts";
export { DEFAULT_ROLE, resolveRole, rolePresets, roleForSubtask, type RolePreset } from "./roles.ts";
export {
  LATEST,
  promptTemplates,
  renderTemplate,
  resolveTemplate,
  type PromptTemplate,
  type TemplateVersion,
} from "./templates.ts";
export { interpolate, type Interpolation } from "./interpolate.ts";
export { TEMPLATE_MODEL, TEMPLATE_PROVIDER } from "./template-flow.ts";
export { SUPERVISOR_AGENT_ID } from "./supervisor-flow.ts";
export {
  PARTIAL_MAX_WAIT_MS,
  PARTIAL_MIN_CHARS,
  PARTIAL_MIN_INTERVAL_MS,
  partialEmitter,
  REPORTED_TEMPERATURE,
} from "./model-call.ts";
export { DECOMPOSE_PROMPT, MAX_SUBTASKS, SYNTHESIZE_PROMPT, parsePlan, type Subtask } from "./planning.ts";
