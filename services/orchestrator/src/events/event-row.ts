// What the persister needs from a message to store it. Only the columns are checked, not the
// whole event schema: an event of a type this build does not know yet (rolling upgrade) is
// still stored, while a message that cannot fit the columns is rejected up front instead of
// failing, and blocking, a whole batch.

import { isUuid } from "@tog/core";
import { eventTextsOf, type TaskEvent } from "@tog/events";

/** One row of task_events. `json` is the message data, character for character. */
export interface EventRow {
  taskId: string;
  seq: number;
  type: string;
  agentId: string;
  /** ISO-8601 UTC, normalized so PostgreSQL parses it the way JavaScript did. */
  timestamp: string;
  json: string;
}

export type EventRowResult = { ok: true; row: EventRow } | { ok: false; reason: string };
export type EventRowsResult = { ok: true; rows: EventRow[] } | { ok: false; reason: string };

const MAX_SEQ = 2_147_483_647;
// Years 0001–9999: the range an ISO string without an expanded year covers.
const FIRST_MS = -62_135_596_800_000; // 0001-01-01T00:00:00.000Z
const LAST_MS = 253_402_300_799_999; // 9999-12-31T23:59:59.999Z

// `fatal`: bytes that are not UTF-8 cannot be stored as they came. `ignoreBOM`: keep a BOM
// rather than silently dropping it (JSON.parse then refuses it).
const decoder = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true });

/**
 * Turns message data into rows, one per event it holds (docs/decisions.md "One message per
 * write"), or says why it can never be stored. One unreadable event refuses the whole message:
 * a message of several events comes from a worker that logged them before publishing.
 */
export function toEventRows(data: Uint8Array): EventRowsResult {
  let message: string;
  try {
    message = decoder.decode(data);
  } catch {
    return { ok: false, reason: "data is not UTF-8" };
  }
  const texts = eventTextsOf(message);
  const rows: EventRow[] = [];
  for (const [i, text] of texts.entries()) {
    const parsed = toEventRow(text);
    if (!parsed.ok) return texts.length === 1 ? parsed : { ok: false, reason: `event ${i + 1}: ${parsed.reason}` };
    rows.push(parsed.row);
  }
  return { ok: true, rows };
}

/** Turns one event's text into a row, or says why it can never be stored. */
export function toEventRow(json: string): EventRowResult {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch {
    return { ok: false, reason: "data is not JSON" };
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) {
    return { ok: false, reason: "data is not a JSON object" };
  }
  const e = value as Record<string, unknown>;
  if (typeof e.workflow_id !== "string" || !isUuid(e.workflow_id)) {
    return { ok: false, reason: "workflow_id is missing or not a UUID" };
  }
  if (typeof e.seq !== "number" || !Number.isInteger(e.seq) || e.seq < 1 || e.seq > MAX_SEQ) {
    return { ok: false, reason: "seq is missing or not a positive 32-bit integer" };
  }
  if (!isText(e.type, 32)) return { ok: false, reason: "type is missing or longer than 32 characters" };
  if (!isText(e.agent_id, 128)) return { ok: false, reason: "agent_id is missing or longer than 128 characters" };
  const millis = typeof e.timestamp === "string" ? Date.parse(e.timestamp) : Number.NaN;
  if (!Number.isFinite(millis) || millis < FIRST_MS || millis > LAST_MS) {
    return { ok: false, reason: "timestamp is missing or not a date" };
  }
  return {
    ok: true,
    row: {
      taskId: e.workflow_id.toLowerCase(),
      seq: e.seq,
      type: e.type,
      agentId: e.agent_id,
      timestamp: new Date(millis).toISOString(),
      json,
    },
  };
}

/** A non-empty string of at most `max` characters (code points, as PostgreSQL counts them). */
function isText(value: unknown, max: number): value is string {
  if (typeof value !== "string" || value.length === 0) return false;
  if (value.length <= max) return true;
  let n = 0;
  for (const _ of value) if (++n > max) return false;
  return true;
}

/**
 * The row of an event the worker made itself: `json` is the text it publishes (`JSON.stringify`
 * of the same object, event-emitter.ts), so the log and the bus hold the same characters.
 */
export function eventRowOf(event: TaskEvent): EventRow {
  return {
    taskId: event.workflow_id.toLowerCase(),
    seq: event.seq,
    type: event.type,
    agentId: event.agent_id,
    timestamp: event.timestamp,
    json: JSON.stringify(event),
  };
}
