import { z } from "zod";

export const RISK_LEVELS = ["low", "medium", "high"] as const;
export type RiskLevel = (typeof RISK_LEVELS)[number];

export type JsonValue = null | boolean | number | string | JsonValue[] | { [key: string]: JsonValue };

/** What a tool returns: JSON data for events/checkpoints and a short text form for the model. */
export interface ToolResult {
  data: JsonValue;
  text: string;
}

export interface ToolContext {
  /** Aborted on timeout or cancellation; long-running tools must pass it on (fetch, timers). */
  signal: AbortSignal;
  /** Injected clock, so a replayed or tested step sees the same "now". */
  now?: () => Date;
}

export interface Tool<S extends z.ZodType = z.ZodType> {
  /** `^[a-zA-Z0-9_-]{1,64}$`: the common subset that OpenAI and Anthropic accept for function names. */
  readonly name: string;
  readonly description: string;
  readonly parameters: S;
  readonly riskLevel: RiskLevel;
  readonly timeoutSeconds: number;
  // Method syntax on purpose: a Tool<Specific> must be storable as a Tool<ZodType> in a registry.
  execute(args: z.output<S>, context: ToolContext): Promise<ToolResult>;
}

export type AnyTool = Tool<z.ZodType>;

/** JSON Schema object as handed to a model's tool-calling API. */
export type JsonSchema = Record<string, unknown>;

export interface LlmToolDefinition {
  name: string;
  description: string;
  parameters: JsonSchema;
}

const TOOL_NAME = /^[a-zA-Z0-9_-]{1,64}$/;

/** Checks a definition once, at start-up, and keeps the precise argument type for `execute`. */
export function defineTool<S extends z.ZodType>(tool: Tool<S>): Tool<S> {
  if (!TOOL_NAME.test(tool.name)) {
    throw new TypeError(`Tool name "${tool.name}" must match ${TOOL_NAME.source}`);
  }
  if (!RISK_LEVELS.includes(tool.riskLevel)) {
    throw new TypeError(`Tool "${tool.name}" has an unknown risk level "${String(tool.riskLevel)}"`);
  }
  if (!(tool.timeoutSeconds > 0) || !Number.isFinite(tool.timeoutSeconds)) {
    throw new TypeError(`Tool "${tool.name}" needs a positive finite timeoutSeconds`);
  }
  const schema = toolJsonSchema(tool);
  if (schema.type !== "object") {
    // Both OpenAI and Anthropic reject tool parameters whose top level is not an object.
    throw new TypeError(`Tool "${tool.name}" parameters must be a zod object schema`);
  }
  return tool;
}

/**
 * The JSON Schema (draft 2020-12) of a tool's arguments as the model should send them: the
 * input side of the zod schema, so fields with defaults are optional. `$schema` is dropped
 * because some providers reject unknown top-level keywords in tool parameters.
 */
export function toolJsonSchema(tool: Pick<AnyTool, "parameters">): JsonSchema {
  const { $schema: _ignored, ...schema } = z.toJSONSchema(tool.parameters, { io: "input" }) as JsonSchema;
  return schema;
}

export function toolText(value: JsonValue): string {
  return typeof value === "string" ? value : JSON.stringify(value);
}
