import type { EventType } from "./event-types.ts";
import type { TaskEvent } from "./envelope.ts";

// Which events go where once they leave the real-time stream: the permanent log, the task
// history endpoint, session turns.

/**
 * Types the permanent log (PostgreSQL) does not store. Empty on purpose: LLM_PARTIAL is stored
 * too, because a replay past the real-time cache must be gap-free in seq (6.3 rule 4) and give a
 * returning client every event it missed. Readers that do not want partials filter them
 * (SESSION_EXCLUDED_TYPES); emitters keep their number down by coalescing chunks.
 */
export const PERSISTED_EXCLUDED_TYPES: readonly EventType[] = [];

export function isPersistedType(type: EventType): boolean {
  return !PERSISTED_EXCLUDED_TYPES.includes(type);
}

/** Types left out of a session turn's `events` (2.7, 6.3 rule 8). */
export const SESSION_EXCLUDED_TYPES: readonly EventType[] = ["LLM_PARTIAL"];

export function isSessionTurnEventType(type: EventType): boolean {
  return !SESSION_EXCLUDED_TYPES.includes(type);
}

/** An item of GET /tasks/{id}/events: exactly the 6.1 event (no SSE-only top-level copies). */
export type HistoryItem = TaskEvent;

export function toHistoryItem(event: TaskEvent): HistoryItem {
  return {
    workflow_id: event.workflow_id,
    type: event.type,
    agent_id: event.agent_id,
    message: event.message,
    timestamp: event.timestamp,
    seq: event.seq,
    stream_id: event.stream_id,
    trace_id: event.trace_id,
    data: event.data,
  } as HistoryItem;
}

/** An item of a session turn's `events` (2.7). */
export interface SessionTurnEvent {
  workflow_id: string;
  type: EventType;
  message: string;
  timestamp: string;
}

export function toSessionTurnEvent(event: TaskEvent): SessionTurnEvent {
  return { workflow_id: event.workflow_id, type: event.type, message: event.message, timestamp: event.timestamp };
}
