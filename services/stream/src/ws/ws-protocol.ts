import { ValidationError } from "@tog/core";
import { parseEventTypeFilter } from "@tog/events";
import { normalizeTaskId, resumeAfterOf, type StreamRequest } from "../stream-request.ts";

// The WebSocket protocol (OpenAPI `streamWs`), JSON text messages.
//
// Client → server:
//   {"type":"subscribe","workflow_id":"…","types":["LLM_OUTPUT",…] | "A,B","last_event_id":"<millis>-<seq>" | n}
//   {"type":"unsubscribe","workflow_id":"…"}
//   {"type":"ping"}
// Server → client (`streamWs`: events and pong only; no acknowledgements, no errors):
//   an event (6.1, SSE form, carrying its workflow_id); a subscription ends with its terminal
//   event, sent even when the `types` filter leaves it out; {"type":"pong"}. A message the
//   server refuses closes the connection with 4000 + its HTTP status and the error as reason
//   (ws-close.ts, docs/decisions.md "WebSocket server messages").
// Control messages use lower-case types; event types are upper-case, so they never collide.

export type ClientMessage =
  | ({ type: "subscribe" } & StreamRequest)
  | { type: "unsubscribe"; taskId: string }
  | { type: "ping" };

export const CLIENT_MESSAGE_TYPES = ["subscribe", "unsubscribe", "ping"] as const;

/** Parses one client message; ValidationError says what is wrong (the close reason). */
export function parseClientMessage(text: string): ClientMessage {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new ValidationError("Invalid message: not JSON");
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    throw new ValidationError('Invalid message: expected a JSON object with a "type"');
  }
  const m = value as Record<string, unknown>;
  if (typeof m.type !== "string") throw new ValidationError('Invalid message: "type" is required');
  switch (m.type) {
    case "ping":
      return { type: "ping" };
    case "unsubscribe":
      return { type: "unsubscribe", taskId: normalizeTaskId(m.workflow_id) };
    case "subscribe": {
      const taskId = normalizeTaskId(m.workflow_id);
      const filter = parseEventTypeFilter(m.types ?? undefined) as ReadonlySet<string> | null;
      const resumeAfter = resumeAfterOf(m.last_event_id ?? undefined, "last_event_id");
      return { type: "subscribe", taskId, filter, resumeAfter };
    }
    default: {
      const shown = m.type.length > 64 ? `${m.type.slice(0, 64)}…` : m.type;
      throw new ValidationError(
        `Unknown message type: ${JSON.stringify(shown)} (expected ${CLIENT_MESSAGE_TYPES.join(", ")})`,
      );
    }
  }
}

/** The task a malformed message was about, when it names one (for the close reason). */
export function taskIdOf(text: string): string | undefined {
  try {
    const id = (JSON.parse(text) as { workflow_id?: unknown } | null)?.workflow_id;
    return typeof id === "string" && id.length <= 128 ? id : undefined;
  } catch {
    return undefined;
  }
}
