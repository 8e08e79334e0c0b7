import { ValidationError } from "@tog/core";
import { ToolError, errorTypeOf, formatZodIssues, invalidArguments, type ToolErrorType } from "./errors.ts";
import { toolJsonSchema, type AnyTool, type LlmToolDefinition, type ToolResult } from "./tool.ts";

export interface InvokeOptions {
  /** The task's cancellation signal; aborting it ends the call with `CANCELLED`. */
  signal?: AbortSignal;
  now?: () => Date;
}

export type ToolInvocation =
  | { ok: true; tool: string; result: ToolResult; durationMs: number }
  | {
      ok: false;
      tool: string;
      /** ValidationError for bad arguments (INVALID_INPUT), ToolError or the tool's own error otherwise. */
      error: Error;
      errorType: ToolErrorType;
      recoverable: boolean;
      durationMs: number;
    };

export interface ToolRegistry {
  list(): readonly AnyTool[];
  get(name: string): AnyTool | undefined;
  /** Name, description and JSON Schema per tool (all, or the named ones in that order); computed once. */
  definitionsForLlm(names?: readonly string[]): LlmToolDefinition[];
  /**
   * Validates `rawArgs` (an object, or the JSON string a model's tool call carries), runs the tool
   * under its timeout and the caller's signal, and never throws: failures come back as `ok: false`.
   */
  invoke(name: string, rawArgs: unknown, options?: InvokeOptions): Promise<ToolInvocation>;
}

export function createToolRegistry(tools: readonly AnyTool[]): ToolRegistry {
  const byName = new Map<string, AnyTool>();
  const definitions = new Map<string, LlmToolDefinition>();
  for (const tool of tools) {
    if (byName.has(tool.name)) throw new TypeError(`Duplicate tool name "${tool.name}"`);
    byName.set(tool.name, tool);
    definitions.set(tool.name, {
      name: tool.name,
      description: tool.description,
      parameters: toolJsonSchema(tool),
    });
  }
  const all = [...definitions.values()];
  const available = () => [...byName.keys()].join(", ");

  return {
    list: () => [...byName.values()],
    get: (name) => byName.get(name),
    definitionsForLlm(names) {
      if (names === undefined) return all;
      return names.map((name) => {
        const definition = definitions.get(name);
        if (!definition) throw new ValidationError(`Unknown tool "${name}". Available tools: ${available()}`);
        return definition;
      });
    },
    async invoke(name, rawArgs, options = {}) {
      const started = performance.now();
      const finish = (outcome: { result: ToolResult } | { error: unknown }): ToolInvocation => {
        const durationMs = Math.round((performance.now() - started) * 1000) / 1000;
        if ("result" in outcome) return { ok: true, tool: name, result: outcome.result, durationMs };
        const error = outcome.error instanceof Error ? outcome.error : new Error(String(outcome.error));
        const errorType = errorTypeOf(error);
        const recoverable = error instanceof ToolError ? error.recoverable : errorType !== "INVALID_INPUT";
        return { ok: false, tool: name, error, errorType, recoverable, durationMs };
      };

      const tool = byName.get(name);
      if (!tool)
        return finish({ error: new ValidationError(`Unknown tool "${name}". Available tools: ${available()}`) });

      let args = rawArgs;
      if (typeof rawArgs === "string") {
        try {
          args = rawArgs.trim() === "" ? {} : JSON.parse(rawArgs);
        } catch (cause) {
          return finish({ error: invalidArguments(name, `not valid JSON (${(cause as Error).message})`) });
        }
      } else if (rawArgs === undefined || rawArgs === null) {
        args = {};
      }
      const parsed = tool.parameters.safeParse(args);
      if (!parsed.success) return finish({ error: invalidArguments(name, formatZodIssues(parsed.error)) });

      if (options.signal?.aborted) {
        return finish({ error: new ToolError("CANCELLED", `Tool "${name}" was cancelled before it started`) });
      }
      try {
        const result = await runWithDeadline(tool, parsed.data, options);
        return finish({ result });
      } catch (error) {
        return finish({ error });
      }
    },
  };
}

/**
 * Races the tool against its timeout and the caller's signal. A tool that ignores the signal
 * keeps running in the background, but its late result is dropped: the caller has moved on.
 */
function runWithDeadline(tool: AnyTool, args: unknown, options: InvokeOptions): Promise<ToolResult> {
  const controller = new AbortController();
  const timeoutMs = tool.timeoutSeconds * 1000;
  const timer = setTimeout(
    () => controller.abort(new ToolError("TIMEOUT", `Tool "${tool.name}" timed out after ${tool.timeoutSeconds} s`)),
    timeoutMs,
  );
  const onCancel = () =>
    controller.abort(
      new ToolError("CANCELLED", `Tool "${tool.name}" was cancelled`, { cause: options.signal?.reason }),
    );
  options.signal?.addEventListener("abort", onCancel, { once: true });

  return new Promise<ToolResult>((resolve, reject) => {
    controller.signal.addEventListener("abort", () => reject(controller.signal.reason), { once: true });
    const context = options.now ? { signal: controller.signal, now: options.now } : { signal: controller.signal };
    // Through a microtask so that a tool throwing synchronously is reported like a rejection.
    Promise.resolve()
      .then(() => tool.execute(args, context))
      .then(resolve, reject);
  }).finally(() => {
    clearTimeout(timer);
    options.signal?.removeEventListener("abort", onCancel);
  });
}
