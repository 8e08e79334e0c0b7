import type { EventPayloads, JsonValue } from "@tog/events";
import { abortReason, type ToolCall } from "@tog/providers";
import { requiresApproval, type AnyTool } from "@tog/tools";
import { WorkflowFailure, pending, type PendingEvent, type FlowContext } from "../runtime/flow-context.ts";
import { clip } from "./usage.ts";

// One tool call requested by a model: availability check, approval when the tool's risk
// reaches the threshold, then the call itself as a durable step. Live: TOOL_INVOKED (before the
// tool runs). Committed: TOOL_OBSERVATION (+ WORKSPACE_UPDATED for workspace_write), or a
// recoverable ERROR_OCCURRED when the call failed — the model gets the error and may correct it.
// Every tool failure is reported as TOOL_EXECUTION_FAILED (bad arguments, a tool timeout, an
// unavailable tool alike): INVALID_INPUT and TIMEOUT in a task's stream would read as the task's
// own input or deadline. The precise kind is in the message and in what the model is told.

export interface ToolCallOutcome {
  /** Whether the tool was actually run (counts toward tools_invoked). */
  invoked: boolean;
  ok: boolean;
  /** The `tool` message the model receives. */
  content: string;
}

export interface ToolCallRequest {
  /** Step key, e.g. `tool:0.1:calculator`. */
  key: string;
  /** Approval key part, unique in this context (the runtime namespaces it like step keys). */
  approvalKey: string;
  call: ToolCall;
  /** Tools this agent may use. */
  allowed: ReadonlySet<string>;
}

export async function runToolCall(ctx: FlowContext, request: ToolCallRequest): Promise<ToolCallOutcome> {
  const { call } = request;
  const tool = request.allowed.has(call.name) ? ctx.tools.get(call.name) : undefined;
  if (!tool) {
    const message = `Tool "${call.name}" is not available to this agent (available: ${[...request.allowed].join(", ") || "none"})`;
    return ctx.step<ToolCallOutcome>(request.key, { kind: "tool", name: call.name }, async () => ({
      output: { invoked: false, ok: false, content: `Error (INVALID_INPUT): ${message}` },
      events: [toolError(message)],
    }));
  }

  let args: Record<string, unknown> = call.arguments;
  if (requiresApproval(tool, { threshold: ctx.settings.approvalThreshold })) {
    const outcome = await ctx.requestApproval({
      key: request.approvalKey,
      toolName: tool.name,
      operation: `invoke ${tool.name}`,
      riskLevel: tool.riskLevel,
      details: { agent_id: ctx.agentId, tool_args: toJsonObject(args) },
    });
    if (outcome.decision !== "approved") {
      throw outcome.decision === "denied"
        ? new WorkflowFailure(
            "APPROVAL_DENIED",
            `Tool call ${tool.name} was denied by ${outcome.approvedBy}${outcome.comments ? `: ${outcome.comments}` : ""}`,
          )
        : new WorkflowFailure("APPROVAL_TIMEOUT", `Approval of tool call ${tool.name} timed out`);
    }
    const modified = outcome.modifiedAction?.trim();
    if (modified) {
      const replacement = parseObject(modified);
      if (replacement) {
        args = replacement;
      } else {
        // Free text is an instruction, not arguments: the call is not run, the model is told why.
        return ctx.step<ToolCallOutcome>(request.key, { kind: "tool", name: tool.name }, async () => ({
          output: {
            invoked: false,
            ok: true,
            content: `The approver did not run this call and instructed instead: ${modified}`,
          },
        }));
      }
    }
  }
  return invoke(ctx, request.key, tool, args);
}

function invoke(ctx: FlowContext, key: string, tool: AnyTool, args: Record<string, unknown>): Promise<ToolCallOutcome> {
  return ctx.step<ToolCallOutcome>(key, { kind: "tool", name: tool.name }, async () => {
    const toolArgs = toJsonObject(args);
    ctx.emit("TOOL_INVOKED", `Invoking ${tool.name}`, {
      tool_name: tool.name,
      tool_args: toolArgs,
      timeout_seconds: tool.timeoutSeconds,
    });
    const result = await ctx.tools.invoke(tool.name, args, { signal: ctx.signal });
    if (!result.ok) {
      if (ctx.signal.aborted) throw abortReason(ctx.signal);
      return {
        output: { invoked: true, ok: false, content: `Error (${result.errorType}): ${result.error.message}` },
        events: [toolError(`${tool.name}: ${result.error.message}`)],
      };
    }
    const data = result.result.data as JsonValue;
    const events: PendingEvent[] = [
      pending("TOOL_OBSERVATION", `${tool.name} returned`, {
        tool_name: tool.name,
        result: data,
        duration_ms: Math.round(result.durationMs),
      }),
    ];
    const change = workspaceChange(tool.name, data);
    if (change)
      events.push(
        pending(
          "WORKSPACE_UPDATED",
          `Workspace key "${change.key}" ${change.action === "delete" ? "deleted" : "set"}`,
          change,
        ),
      );
    return { output: { invoked: true, ok: true, content: result.result.text }, events };
  });
}

function toolError(message: string): PendingEvent {
  return pending("ERROR_OCCURRED", clip(`Tool call failed: ${message}`, 300), {
    error_type: "TOOL_EXECUTION_FAILED",
    error_message: message,
    recoverable: true,
    retry_count: 0,
    max_retries: 0,
    severity: "warning",
  });
}

/** workspace_write only validates and describes the change; applying it is the workflow's event. */
function workspaceChange(toolName: string, data: JsonValue): EventPayloads["WORKSPACE_UPDATED"] | undefined {
  if (toolName !== "workspace_write" || data === null || typeof data !== "object" || Array.isArray(data))
    return undefined;
  const { key, value, action } = data as Record<string, JsonValue>;
  if (typeof key !== "string" || key === "" || (action !== "set" && action !== "delete")) return undefined;
  return { key, value: value ?? null, action };
}

function parseObject(text: string): Record<string, unknown> | undefined {
  try {
    const value = JSON.parse(text) as unknown;
    return value !== null && typeof value === "object" && !Array.isArray(value)
      ? (value as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

/** Model-supplied arguments as a JSON object (undefined values dropped, like the wire would). */
function toJsonObject(args: Record<string, unknown>): Record<string, JsonValue> {
  return JSON.parse(JSON.stringify(args ?? {})) as Record<string, JsonValue>;
}
