import { ValidationError } from "@tog/core";

/** The 26 public event types (docs/api.md "Event payloads"), in their documented order. */
export const SPEC_EVENT_TYPES = [
  "WORKFLOW_STARTED",
  "WORKFLOW_COMPLETED",
  "AGENT_STARTED",
  "AGENT_THINKING",
  "AGENT_COMPLETED",
  "TOOL_INVOKED",
  "TOOL_OBSERVATION",
  "TEAM_RECRUITED",
  "TEAM_RETIRED",
  "TEAM_STATUS",
  "DEPENDENCY_SATISFIED",
  "MESSAGE_SENT",
  "MESSAGE_RECEIVED",
  "LLM_PROMPT",
  "LLM_PARTIAL",
  "LLM_OUTPUT",
  "PROGRESS",
  "DATA_PROCESSING",
  "WAITING",
  "ERROR_OCCURRED",
  "ERROR_RECOVERY",
  "APPROVAL_REQUESTED",
  "APPROVAL_DECISION",
  "WORKSPACE_UPDATED",
  "ROLE_ASSIGNED",
  "DELEGATION",
] as const;

export type SpecEventType = (typeof SPEC_EVENT_TYPES)[number];

/** Outside the 26 but emitted with a payload (6.3 rule 2): a sub-agent or child task failed. */
export const AGENT_FAILED = "AGENT_FAILED";

/**
 * Every type we emit: the 26 of 6.2 plus AGENT_FAILED. This is also exactly the set a `types`
 * filter (SSE query, WebSocket subscribe) accepts; anything else is a 400.
 */
export const EVENT_TYPES = [...SPEC_EVENT_TYPES, AGENT_FAILED] as const;

export type EventType = (typeof EVENT_TYPES)[number];

/**
 * Names 6.3 rule 1 says the streaming API never emits. Not event types: failures are
 * ERROR_OCCURRED, success is WORKFLOW_COMPLETED. Kept only so tests can prove their absence.
 */
export const NEVER_EMITTED_EVENT_TYPES = [
  "WORKFLOW_FAILED",
  "TASK_COMPLETED",
  "TOOL_COMPLETED",
  "TOOL_FAILED",
  "BUDGET_UPDATE",
] as const;

export const EVENT_CATEGORIES = ["Workflow", "Agent", "Tool", "Team", "Message", "LLM", "Progress", "System"] as const;
export type EventCategory = (typeof EVENT_CATEGORIES)[number];

/** Category of each type as in 6.2; AGENT_FAILED belongs with the other agent events. */
export const EVENT_CATEGORY: Readonly<Record<EventType, EventCategory>> = {
  WORKFLOW_STARTED: "Workflow",
  WORKFLOW_COMPLETED: "Workflow",
  AGENT_STARTED: "Agent",
  AGENT_THINKING: "Agent",
  AGENT_COMPLETED: "Agent",
  AGENT_FAILED: "Agent",
  TOOL_INVOKED: "Tool",
  TOOL_OBSERVATION: "Tool",
  TEAM_RECRUITED: "Team",
  TEAM_RETIRED: "Team",
  TEAM_STATUS: "Team",
  DEPENDENCY_SATISFIED: "Team",
  MESSAGE_SENT: "Message",
  MESSAGE_RECEIVED: "Message",
  LLM_PROMPT: "LLM",
  LLM_PARTIAL: "LLM",
  LLM_OUTPUT: "LLM",
  PROGRESS: "Progress",
  DATA_PROCESSING: "Progress",
  WAITING: "Progress",
  ERROR_OCCURRED: "System",
  ERROR_RECOVERY: "System",
  APPROVAL_REQUESTED: "System",
  APPROVAL_DECISION: "System",
  WORKSPACE_UPDATED: "System",
  ROLE_ASSIGNED: "System",
  DELEGATION: "System",
};

const EVENT_TYPE_SET: ReadonlySet<string> = new Set(EVENT_TYPES);

/** Exact, case-sensitive membership test (the reference matches type names the same way). */
export function isEventType(value: unknown): value is EventType {
  return typeof value === "string" && EVENT_TYPE_SET.has(value);
}

/**
 * Parses a `types` filter: the SSE query value (comma-separated) or the WebSocket `types`
 * array. Returns null when there is no filter (absent, empty, or only empty entries).
 * Names are exact and case-sensitive; blanks around commas are ignored. Any unknown name
 * → ValidationError naming every unknown one.
 */
export function parseEventTypeFilter(value: unknown): ReadonlySet<EventType> | null {
  if (value === undefined || value === null) return null;
  let names: string[];
  if (typeof value === "string") {
    names = value.split(",");
  } else if (Array.isArray(value) && value.every((v) => typeof v === "string")) {
    names = value as string[];
  } else {
    throw new ValidationError("Invalid types: expected a comma-separated string or an array of event type names");
  }
  const selected = new Set<EventType>();
  const unknown: string[] = [];
  for (const raw of names) {
    const name = raw.trim();
    if (name === "") continue;
    if (isEventType(name)) selected.add(name);
    else unknown.push(name.length > 64 ? `${name.slice(0, 64)}…` : name);
  }
  if (unknown.length > 0) {
    throw new ValidationError(`Invalid types: unknown event type ${unknown.map((n) => JSON.stringify(n)).join(", ")}`);
  }
  return selected.size === 0 ? null : selected;
}
