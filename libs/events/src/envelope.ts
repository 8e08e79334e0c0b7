import { z } from "zod";
import { ValidationError } from "@tog/core";
import { EVENT_TYPES, type EventType } from "./event-types.ts";
import { EVENT_PAYLOAD_SCHEMAS, type EventPayloads } from "./payloads.ts";

// The event of docs/api.md "Events and streams", with `trace_id`: the W3C trace id (32 lower-case hex) of the
// task that emitted it, on every event, so a client or an operator can jump from any event to the
// task's trace. `data` could be optional; every one of our types has a payload, so our
// events always carry it.

/** `agent_id` of workflow-level events (WORKFLOW_STARTED, WORKFLOW_COMPLETED, terminal errors). */
export const WORKFLOW_AGENT_ID = "orchestrator";

const STREAM_ID_RE = /^(\d{1,16})-(\d{1,16})$/;
const TRACE_ID_RE = /^[0-9a-f]{32}$/;

const baseFields = {
  workflow_id: z.string().min(1),
  agent_id: z.string().min(1),
  message: z.string(),
  timestamp: z.iso.datetime({ offset: true }),
  seq: z.int().min(1),
  stream_id: z.string().regex(STREAM_ID_RE, "stream_id must be <millis>-<seq>"),
  trace_id: z.string().regex(TRACE_ID_RE, "trace_id must be 32 lower-case hex characters"),
};

export const eventBaseSchema = z.strictObject(baseFields);

export type EventBase = z.output<typeof eventBaseSchema>;

/** An event of type T (a union over the types when T is a union). */
export type TaskEvent<T extends EventType = EventType> = {
  [K in T]: EventBase & { type: K; data: EventPayloads[K] };
}[T];

/**
 * Runtime schema of a whole event; `type` selects the payload schema. Fields are declared in
 * the contract's order because parsing rebuilds the object in schema order, and a parsed event
 * re-serializes exactly like a freshly built one.
 */
export const taskEventSchema = z.discriminatedUnion(
  "type",
  EVENT_TYPES.map((type) =>
    z.strictObject({
      workflow_id: baseFields.workflow_id,
      type: z.literal(type),
      agent_id: baseFields.agent_id,
      message: baseFields.message,
      timestamp: baseFields.timestamp,
      seq: baseFields.seq,
      stream_id: baseFields.stream_id,
      trace_id: baseFields.trace_id,
      data: EVENT_PAYLOAD_SCHEMAS[type],
    }),
  ) as unknown as [z.ZodObject, ...z.ZodObject[]],
);

/** Validates an event read back from storage or the bus; ValidationError names the first problem. */
export function parseEvent(value: unknown): TaskEvent {
  const result = taskEventSchema.safeParse(value);
  if (!result.success) {
    const issue = result.error.issues[0];
    const where = issue && issue.path.length > 0 ? `${issue.path.join(".")}: ` : "";
    throw new ValidationError(`Invalid event: ${where}${issue?.message ?? "malformed"}`, { cause: result.error });
  }
  return result.data as TaskEvent;
}

export interface NewEvent<T extends EventType> {
  workflow_id: string;
  type: T;
  agent_id: string;
  message: string;
  seq: number;
  trace_id: string;
  data: EventPayloads[T];
  /** Emit time (default now); `timestamp` and the millis of `stream_id` are both taken from it. */
  at?: Date | number;
}

/**
 * Builds an event with its fields in the contract's order. Build it ONCE, checkpoint it and
 * republish the same object after a crash: a redelivered step must not mint a new timestamp
 * or stream id for an event that already exists.
 */
export function buildEvent<T extends EventType>(input: NewEvent<T>): TaskEvent<T> {
  const millis = input.at === undefined ? Date.now() : typeof input.at === "number" ? input.at : input.at.getTime();
  return {
    workflow_id: input.workflow_id,
    type: input.type,
    agent_id: input.agent_id,
    message: input.message,
    timestamp: new Date(millis).toISOString(),
    seq: input.seq,
    stream_id: formatStreamId(millis, input.seq),
    trace_id: input.trace_id,
    data: input.data,
  } as TaskEvent<T>;
}

/** JetStream `Nats-Msg-Id` of an event: one per (task, seq), so a republish is deduplicated. */
export function eventMessageId(event: { workflow_id: string; seq: number }): string {
  return `${event.workflow_id}:${event.seq}`;
}

/** `<millis>-<seq>`: the emit time in Unix milliseconds and the event's seq. */
export function formatStreamId(millis: number, seq: number): string {
  return `${millis}-${seq}`;
}

export interface StreamIdParts {
  millis: number;
  seq: number;
}

/** The parts of a `<millis>-<seq>` id, or null when the value is not one. */
export function parseStreamId(value: string): StreamIdParts | null {
  const m = STREAM_ID_RE.exec(value);
  if (!m) return null;
  const millis = Number(m[1]);
  const seq = Number(m[2]);
  if (!Number.isSafeInteger(millis) || !Number.isSafeInteger(seq)) return null;
  return { millis, seq };
}

/**
 * Resume point of an SSE/WebSocket stream (Last-Event-ID header or `last_event_id` query):
 * returns the seq after which to replay (exclusive), or null for no resume point (replay from
 * the first event).
 * - `<millis>-<seq>`: a stream id; replay events with seq > its seq.
 * - `n` (a non-negative integer): replay events with seq > n.
 * - empty, `0` (or a stream id with seq 0): no resume point.
 * - anything else: ValidationError `Invalid Last-Event-ID: ...` (or the given parameter name).
 */
export function parseResumePoint(value: string | null | undefined, parameter = "Last-Event-ID"): number | null {
  if (value === undefined || value === null) return null;
  const trimmed = value.trim();
  if (trimmed === "") return null;
  let seq: number | null = null;
  if (trimmed.includes("-")) {
    seq = parseStreamId(trimmed)?.seq ?? null;
  } else if (/^\d{1,16}$/.test(trimmed)) {
    const n = Number(trimmed);
    seq = Number.isSafeInteger(n) ? n : null;
  }
  if (seq === null) {
    const shown = trimmed.length > 64 ? `${trimmed.slice(0, 64)}…` : trimmed;
    throw new ValidationError(
      `Invalid ${parameter}: ${JSON.stringify(shown)} (expected <millis>-<seq> or a non-negative integer)`,
    );
  }
  return seq === 0 ? null : seq;
}
