import type { TaskEvent } from "./api.ts";
import { ms, show, tokens, usd } from "./format.ts";

// One readable line per event type for the live timeline: a label, a category (for colour)
// and a summary from the payload (docs/api.md "Event payloads"). LLM_PARTIAL chunks are not lines of their
// own: the timeline joins them into the streamed text of their agent.

export type Tone = "workflow" | "agent" | "tool" | "llm" | "progress" | "approval" | "error" | "team" | "system";

export interface EventLine {
  label: string;
  tone: Tone;
  summary: string;
  /** Extra facts shown small: tokens, cost, duration. */
  facts: string[];
}

const d = (e: TaskEvent) => e.data ?? {};
const str = (v: unknown, max?: number) => (v === undefined || v === null ? "" : show(v, max));

function costFacts(
  data: Record<string, unknown>,
  tokenKey: string,
  costKey: string,
  durationKey = "duration_ms",
): string[] {
  const out: string[] = [];
  if (data[tokenKey] !== undefined) out.push(tokens(data[tokenKey]));
  if (data[costKey] !== undefined) out.push(usd(data[costKey]));
  if (data[durationKey] !== undefined) out.push(ms(data[durationKey]));
  return out;
}

export function describeEvent(e: TaskEvent): EventLine {
  const data = d(e);
  switch (e.type) {
    case "WORKFLOW_STARTED":
      return {
        label: "Workflow started",
        tone: "workflow",
        summary: str(data.query) || e.message,
        facts: data.mode ? [`mode ${str(data.mode)}`] : [],
      };
    case "WORKFLOW_COMPLETED":
      return {
        label: "Workflow completed",
        tone: "workflow",
        summary: str(data.result) || e.message,
        facts: [
          ...costFacts(data, "total_tokens", "total_cost_usd"),
          ...(data.tools_invoked !== undefined ? [`${str(data.tools_invoked)} tool calls`] : []),
        ],
      };
    case "AGENT_STARTED":
      return {
        label: "Agent started",
        tone: "agent",
        summary: str(data.subtask) || str(data.role) || e.message,
        facts: data.role ? [`role ${str(data.role)}`] : [],
      };
    case "AGENT_THINKING":
      return { label: "Thinking", tone: "agent", summary: str(data.thought) || e.message, facts: [] };
    case "AGENT_COMPLETED":
      return {
        label: "Agent completed",
        tone: "agent",
        summary: str(data.result) || e.message,
        facts: costFacts(data, "tokens_used", "cost_usd"),
      };
    case "AGENT_FAILED":
      return {
        label: "Agent failed",
        tone: "error",
        summary: str(data.error_message) || str(data.error) || e.message,
        facts: [],
      };
    case "TOOL_INVOKED":
      return {
        label: "Tool call",
        tone: "tool",
        summary: `${str(data.tool_name ?? e.tool)}(${str(data.tool_args ?? e.params, 300)})`,
        facts: [],
      };
    case "TOOL_OBSERVATION":
      return {
        label: "Tool result",
        tone: "tool",
        summary: `${str(data.tool_name ?? e.tool)} → ${str(data.result ?? e.result, 300)}`,
        facts: costFacts(data, "", ""),
      };
    case "LLM_PROMPT":
      return {
        label: "Model call",
        tone: "llm",
        summary: str(data.model) || e.message,
        facts: data.prompt_length !== undefined ? [`${str(data.prompt_length)} chars`] : [],
      };
    case "LLM_PARTIAL":
      return { label: "Streaming", tone: "llm", summary: str(data.chunk), facts: [] };
    case "LLM_OUTPUT":
      return {
        label: "Model output",
        tone: "llm",
        summary: str(data.output, 600) || e.message,
        facts: [...(data.model ? [str(data.model)] : []), ...costFacts(data, "tokens_used", "cost_usd")],
      };
    case "PROGRESS":
      return {
        label: "Progress",
        tone: "progress",
        summary: str(data.current_task) || e.message,
        facts: data.percentage !== undefined ? [`${str(data.percentage)}%`] : [],
      };
    case "DATA_PROCESSING":
      return { label: "Processing", tone: "progress", summary: str(data.operation) || e.message, facts: [] };
    case "WAITING":
      return {
        label: "Waiting",
        tone: "progress",
        summary: str(data.wait_reason) || str(data.waiting_for) || e.message,
        facts: [],
      };
    case "ERROR_OCCURRED":
      return {
        label: data.terminal === true ? `Ended: ${str(data.status)}` : "Error",
        tone: "error",
        summary: str(data.error_message) || e.message,
        facts: data.error_type ? [str(data.error_type)] : [],
      };
    case "ERROR_RECOVERY":
      return { label: "Recovery", tone: "system", summary: str(data.recovery_action) || e.message, facts: [] };
    case "APPROVAL_REQUESTED":
      return {
        label: "Approval requested",
        tone: "approval",
        summary: `${str(data.tool_name)}: ${str(data.operation)}`,
        facts: [
          ...(data.risk_level ? [`risk ${str(data.risk_level)}`] : []),
          ...(data.timeout_seconds !== undefined ? [`times out after ${str(data.timeout_seconds)} s`] : []),
        ],
      };
    case "APPROVAL_DECISION":
      return {
        label: `Approval ${str(data.decision)}`,
        tone: "approval",
        summary: str(data.comments) || e.message,
        facts: data.approved_by ? [`by ${str(data.approved_by)}`] : [],
      };
    case "TEAM_RECRUITED":
    case "TEAM_RETIRED":
    case "TEAM_STATUS":
    case "DEPENDENCY_SATISFIED":
      return {
        label: e.type
          .replaceAll("_", " ")
          .toLowerCase()
          .replace(/^./, (c) => c.toUpperCase()),
        tone: "team",
        summary: e.message,
        facts: [],
      };
    default:
      return {
        label: e.type
          .replaceAll("_", " ")
          .toLowerCase()
          .replace(/^./, (c) => c.toUpperCase()),
        tone: "system",
        summary: e.message,
        facts: [],
      };
  }
}
