import { z } from "zod";
import { OFFLINE_MARKERS, decompose } from "@tog/providers";
import type { PendingEvent, FlowContext } from "../runtime/flow-context.ts";
import { callModel, type ModelTurn } from "./model-call.ts";
import type { TaskPlan } from "./task-plan.ts";

// Decomposition and synthesis calls of the multi-agent modes. The prompts carry the offline
// provider's markers, so offline runs plan and combine deterministically; real models read
// them as a harmless first line.

export const MAX_SUBTASKS = 6;
export const PLAN_MAX_TOKENS = 2_048;
export const SYNTHESIS_MAX_TOKENS = 8_192;

export interface Subtask {
  /** `task-<n>`, 1-based, in plan order. */
  id: string;
  description: string;
  /** Ids of earlier subtasks whose results this one needs. */
  dependencies: string[];
}

export const DECOMPOSE_PROMPT = [
  OFFLINE_MARKERS.decompose,
  `You are a planner. Split the user's request into at most ${MAX_SUBTASKS} self-contained subtasks that separate agents can work on.`,
  "A subtask that needs the result of another lists that subtask's id in `dependencies`; independent subtasks run in parallel.",
  'Reply with JSON only, no prose: {"subtasks":[{"id":"task-1","description":"...","dependencies":[]}]}',
].join("\n");

export const SYNTHESIZE_PROMPT = [
  OFFLINE_MARKERS.synthesize,
  "You combine the results of subtasks into one complete, coherent answer to the original request.",
  "Keep every fact and figure from the results, remove repetition, and do not mention the subtasks themselves.",
].join("\n");

const planSchema = z.object({
  subtasks: z
    .array(
      z.object({
        id: z.union([z.string(), z.number()]).transform(String),
        description: z.string().trim().min(1),
        dependencies: z
          .array(z.union([z.string(), z.number()]).transform(String))
          .optional()
          .default([]),
      }),
    )
    .min(1),
});

export async function planSubtasks(
  ctx: FlowContext,
  plan: TaskPlan,
  options: { key: string; agentId: string },
): Promise<{ subtasks: Subtask[]; turn: ModelTurn }> {
  const turn = await callModel(ctx, plan.selection, {
    key: options.key,
    agentId: options.agentId,
    messages: [
      { role: "system", content: DECOMPOSE_PROMPT },
      { role: "user", content: plan.prompt },
    ],
    maxTokens: PLAN_MAX_TOKENS,
    thinking: { thought: "Breaking the request into subtasks", next_action: "decompose", confidence: 0.7 },
  });
  return { subtasks: parsePlan(turn.text, plan.prompt), turn };
}

/**
 * The model's plan, normalized: ids renumbered `task-1..n`, at most MAX_SUBTASKS, dependencies
 * only on earlier subtasks (so the plan is always a DAG; others are dropped). An unreadable or
 * empty plan falls back to the offline heuristic `decompose` of the prompt.
 */
export function parsePlan(text: string, prompt: string): Subtask[] {
  const parsed = planSchema.safeParse(extractJson(text));
  const raw = parsed.success ? parsed.data.subtasks.slice(0, MAX_SUBTASKS) : decompose(prompt);
  const ids = new Map<string, number>();
  raw.forEach((s, i) => {
    if (!ids.has(s.id)) ids.set(s.id, i);
  });
  return raw.map((s, i) => ({
    id: `task-${i + 1}`,
    description: s.description.trim(),
    dependencies: [
      ...new Set((s.dependencies ?? []).map((d) => ids.get(d)).filter((d): d is number => d !== undefined && d < i)),
    ]
      .sort((a, b) => a - b)
      .map((d) => `task-${d + 1}`),
  }));
}

function extractJson(text: string): unknown {
  const start = text.indexOf("{");
  const end = text.lastIndexOf("}");
  if (start < 0 || end <= start) return undefined;
  try {
    return JSON.parse(text.slice(start, end + 1));
  } catch {
    return undefined;
  }
}

export interface SubtaskResult {
  id: string;
  description: string;
  result: string;
}

export function synthesize(
  ctx: FlowContext,
  plan: TaskPlan,
  results: readonly SubtaskResult[],
  options: { key: string; agentId: string; instruction?: string | undefined; preamble?: PendingEvent[] },
): Promise<ModelTurn> {
  let system = SYNTHESIZE_PROMPT;
  if (plan.customSystemPrompt !== undefined)
    system += `\n\nThe request's own instructions, to follow in the answer:\n${plan.customSystemPrompt}`;
  if (options.instruction) system += `\n\nInstruction from the approver of this task: ${options.instruction}`;
  const sections = results.map((r) => `### ${r.id}: ${r.description}\n${r.result}`).join("\n\n");
  return callModel(ctx, plan.selection, {
    key: options.key,
    agentId: options.agentId,
    messages: [
      { role: "system", content: system },
      { role: "user", content: `Original request: ${plan.prompt}\n\nSubtask results:\n\n${sections}` },
    ],
    maxTokens: SYNTHESIS_MAX_TOKENS,
    thinking: {
      thought: `Combining ${results.length} subtask results into the answer`,
      next_action: "synthesize",
      confidence: 0.8,
    },
    preamble: options.preamble,
  });
}
