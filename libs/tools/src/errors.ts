import { ValidationError, isAppError } from "@tog/core";
import type { z } from "zod";

/**
 * How a failed call is reported in ERROR_OCCURRED `error_type`: the contract's `INVALID_INPUT`,
 * `TIMEOUT` and `TOOL_EXECUTION_FAILED`, plus `CANCELLED`, which the task turns into its
 * own cancellation path instead of an error event.
 */
export type ToolErrorType = "INVALID_INPUT" | "TIMEOUT" | "TOOL_EXECUTION_FAILED" | "CANCELLED";

/** A tool call that failed for a reason other than bad input. */
export class ToolError extends Error {
  readonly errorType: Exclude<ToolErrorType, "INVALID_INPUT">;
  /** Whether trying the same call again may succeed. */
  readonly recoverable: boolean;

  constructor(
    errorType: Exclude<ToolErrorType, "INVALID_INPUT">,
    message: string,
    options: { cause?: unknown; recoverable?: boolean } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = "ToolError";
    this.errorType = errorType;
    this.recoverable = options.recoverable ?? errorType !== "CANCELLED";
  }
}

export function errorTypeOf(error: unknown): ToolErrorType {
  if (error instanceof ToolError) return error.errorType;
  if (isAppError(error) && error.code === "VALIDATION") return "INVALID_INPUT";
  return "TOOL_EXECUTION_FAILED";
}

/** `a.b: message; c: message` — one line, readable by a model that has to correct its call. */
export function formatZodIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => {
      const path = issue.path.map(String).join(".");
      return path === "" ? issue.message : `${path}: ${issue.message}`;
    })
    .join("; ");
}

export function invalidArguments(toolName: string, detail: string): ValidationError {
  return new ValidationError(`Invalid arguments for tool "${toolName}": ${detail}`);
}
