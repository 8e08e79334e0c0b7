import type { EventType } from "./event-types.ts";
import type { TaskEvent } from "./envelope.ts";
import type { FailureStatus, JsonValue } from "./payloads.ts";

// The form streams send (SSE `data:` and WebSocket messages alike): the 6.1 event with the
// type-specific fields of 6.1's note copied to the top level, as clients written for the
// reference read them there. `data` keeps the full payload. One JSON string per event serves
// both SSE and WebSocket, so a fan-out serializes each event exactly once.

/** `status` in the SSE form: the final task status, without the `TASK_STATUS_` prefix. */
export type StreamStatus = "COMPLETED" | FailureStatus;

export interface SseTopLevelFields {
  /** WORKFLOW_COMPLETED, AGENT_COMPLETED, TOOL_OBSERVATION: `data.result`. */
  result?: JsonValue;
  /** TOOL_INVOKED, TOOL_OBSERVATION: `data.tool_name`. */
  tool?: string;
  /** TOOL_INVOKED: `data.tool_args`. */
  params?: Record<string, JsonValue>;
  /** WORKFLOW_COMPLETED: `COMPLETED`; a terminal ERROR_OCCURRED: its `data.status`. */
  status?: StreamStatus;
}

export type SseEvent<T extends EventType = EventType> = TaskEvent<T> & SseTopLevelFields;

export function toSseForm<T extends EventType>(event: TaskEvent<T>): SseEvent<T>;
export function toSseForm(event: TaskEvent): SseEvent {
  switch (event.type) {
    case "WORKFLOW_COMPLETED":
      return { ...event, result: event.data.result, status: "COMPLETED" };
    case "AGENT_COMPLETED":
      return { ...event, result: event.data.result };
    case "TOOL_INVOKED":
      return { ...event, tool: event.data.tool_name, params: event.data.tool_args };
    case "TOOL_OBSERVATION":
      return { ...event, tool: event.data.tool_name, result: event.data.result };
    case "ERROR_OCCURRED":
      return event.data.status === undefined ? event : { ...event, status: event.data.status };
    default:
      return event;
  }
}

/** What a fan-out needs per event, computed once and shared by every client. */
export interface EncodedEvent {
  seq: number;
  type: EventType;
  /** The SSE-form JSON: the WebSocket message, and the `data:` line of the SSE frame. */
  json: string;
  /** The complete SSE frame. */
  sse: Buffer;
}

export function encodeEvent(event: TaskEvent): EncodedEvent {
  const json = JSON.stringify(toSseForm(event));
  return { seq: event.seq, type: event.type, json, sse: sseFrameFromJson(event.stream_id, event.type, json) };
}

/** `id: <stream_id>\nevent: <type>\ndata: <json>\n\n`. */
export function encodeSseFrame(event: TaskEvent): Buffer {
  return sseFrameFromJson(event.stream_id, event.type, JSON.stringify(toSseForm(event)));
}

/** The WebSocket text message of an event. */
export function encodeWsFrame(event: TaskEvent): string {
  return JSON.stringify(toSseForm(event));
}

/**
 * Frames an already serialized SSE-form JSON. JSON.stringify never emits a raw CR or LF, so
 * the payload always fits the single `data:` line.
 */
export function sseFrameFromJson(streamId: string, type: string, json: string): Buffer {
  return Buffer.from(`id: ${streamId}\nevent: ${type}\ndata: ${json}\n\n`, "utf8");
}
