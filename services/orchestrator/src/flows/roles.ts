import { ValidationError } from "@tog/core";

// Role presets (context.role). A role gives an agent its system prompt, the tools it may call
// (intersected with the tools the worker has registered) and the capabilities announced in
// TEAM_RECRUITED / ROLE_ASSIGNED. `context.system_prompt` replaces the prompt, never the tools.

export interface RolePreset {
  name: string;
  description: string;
  systemPrompt: string;
  tools: readonly string[];
  capabilities: readonly string[];
}

const COMMON =
  "Answer in the language of the request. Be accurate and concise; say so plainly when you are unsure. " +
  "Use a tool when it gives a more reliable answer than reasoning alone (arithmetic, dates, JSON), and base your answer on its result.";

const PRESETS: readonly RolePreset[] = [
  {
    name: "generalist",
    description: "All-round assistant (default)",
    systemPrompt: `You are a helpful, precise assistant. ${COMMON}`,
    tools: ["calculator", "datetime", "json", "text"],
    capabilities: ["general", "reasoning", "calculation"],
  },
  {
    name: "analyst",
    description: "Quantitative and comparative analysis",
    systemPrompt: `You are a careful analyst. Break problems into measurable parts, compare options on explicit criteria and show the figures your conclusions rest on. ${COMMON}`,
    tools: ["calculator", "datetime", "json", "text", "workspace_write"],
    capabilities: ["analysis", "comparison", "calculation", "data"],
  },
  {
    name: "researcher",
    description: "Gathers and organizes facts",
    systemPrompt: `You are a thorough researcher. Collect the relevant facts, keep track of where each one comes from and separate established facts from open questions. ${COMMON}`,
    tools: ["datetime", "text", "http_fetch"],
    capabilities: ["research", "fact-finding", "summarization"],
  },
  {
    name: "coder",
    description: "Writes and reviews code and structured data",
    systemPrompt: `You are an experienced software engineer. Give correct, idiomatic code with brief explanations, and point out edge cases and errors. ${COMMON}`,
    tools: ["calculator", "json", "text", "workspace_write"],
    capabilities: ["coding", "debugging", "data-formats"],
  },
  {
    name: "writer",
    description: "Drafts and edits prose",
    systemPrompt: `You are a skilled writer and editor. Produce clear, well-structured text suited to its audience, keeping every fact from the material you are given. ${COMMON}`,
    tools: ["text", "datetime"],
    capabilities: ["writing", "editing", "summarization"],
  },
];

export const DEFAULT_ROLE = "generalist";

const BY_NAME = new Map(PRESETS.map((r) => [r.name, r]));

export function rolePresets(): readonly RolePreset[] {
  return PRESETS;
}

/** The preset named `name` (default generalist). Names are exact and case-sensitive. */
export function resolveRole(name: string | undefined): RolePreset {
  const role = BY_NAME.get(name ?? DEFAULT_ROLE);
  if (!role) throw new ValidationError(`Unknown role: "${name}" (allowed: ${PRESETS.map((r) => r.name).join(", ")})`);
  return role;
}

// Supervisor recruitment: the specialist whose words a subtask uses, checked in this order.
const SPECIALTIES: ReadonlyArray<readonly [string, RegExp]> = [
  [
    "coder",
    /\b(code|coding|program\w*|script|function|bug|debug\w*|regex|sql|json|implement\w*|calculat\w*|compute)\b/i,
  ],
  ["analyst", /\b(analy[sz]\w*|compar\w*|evaluat\w*|assess\w*|metrics?|data|trends?|pros and cons|trade-?offs?)\b/i],
  ["researcher", /\b(research\w*|find|look up|investigat\w*|gather\w*|history|sources?|facts?)\b/i],
  ["writer", /\b(write|draft|summar\w*|report|explain|compose|essay|article|answer)\b/i],
];

/** The role a supervisor gives a member for this subtask; `fallback` when no specialty matches. */
export function roleForSubtask(description: string, fallback: RolePreset): RolePreset {
  for (const [name, words] of SPECIALTIES) {
    if (words.test(description)) return BY_NAME.get(name) ?? fallback;
  }
  return fallback;
}
