import { headers as natsHeaders, type MsgHdrs } from "@nats-io/transport-node";
import { JetStreamApiError, type JetStreamPublishOptions, type PubAck } from "@nats-io/jetstream";
import { ConflictError, injectTraceContext, SpanKind, spansExported, withSpan } from "@tog/core";
import type { Bus } from "./connection.ts";
import { systemSubjects } from "./streams.ts";

export type { PubAck };

export type Payload = Uint8Array | object;

export interface CorePublishOptions {
  /** Extra headers; trace headers are added from the active context. */
  headers?: Record<string, string>;
}

export interface PublishOptions extends CorePublishOptions {
  /** Sent as `Nats-Msg-Id`: a repeat within the stream's duplicate window is not stored again (`duplicate: true`). */
  msgID?: string;
  /** Server-checked preconditions; a mismatch throws ConflictError. */
  expect?: {
    /** Sequence of the last message on this exact subject; 0 = no message yet. */
    lastSubjectSequence?: number;
    lastMsgID?: string;
  };
  /** PubAck deadline (default: the client's, 5 s). */
  timeoutMs?: number;
}

// Server error codes of failed publish expectations.
const WRONG_LAST_SEQUENCE = 10071;
const WRONG_LAST_MSG_ID = 10070;

const encoder = new TextEncoder();

/** Objects are JSON-encoded once; bytes pass through. */
export function encodePayload(data: Payload): Uint8Array {
  return data instanceof Uint8Array ? data : encoder.encode(JSON.stringify(data));
}

/** NATS headers carrying the caller's headers and the active span's traceparent/tracestate. */
export function messageHeaders(extra?: Record<string, string>): MsgHdrs {
  const h = natsHeaders();
  if (extra) for (const [k, v] of Object.entries(extra)) h.set(k, v);
  for (const [k, v] of Object.entries(injectTraceContext({}))) h.set(k, v);
  return h;
}

/**
 * A PRODUCER span around one publish (messaging semantic conventions), only when spans are
 * exported; its context is what the message headers carry, so the consumer's span is its child.
 * Named by the subject's first two tokens (`send tog.events`): never one name per task.
 */
function producerSpan<T>(subject: string, fn: () => T): T | Promise<T> {
  if (!spansExported()) return fn();
  const destination = subject.split(".").slice(0, 2).join(".");
  return withSpan(`send ${destination}`, fn, {
    kind: SpanKind.PRODUCER,
    attributes: {
      "messaging.system": "nats",
      "messaging.operation.type": "send",
      "messaging.destination.name": subject,
    },
  });
}

/** JetStream publish: resolves with the stream's PubAck once the message is stored. */
export async function publish(bus: Bus, subject: string, data: Payload, options: PublishOptions = {}): Promise<PubAck> {
  return producerSpan(subject, () => publishNow(bus, subject, data, options));
}

async function publishNow(bus: Bus, subject: string, data: Payload, options: PublishOptions): Promise<PubAck> {
  const opts: Partial<JetStreamPublishOptions> = { headers: messageHeaders(options.headers) };
  if (options.msgID !== undefined) opts.msgID = options.msgID;
  if (options.timeoutMs !== undefined) opts.timeout = options.timeoutMs;
  if (options.expect) {
    const expect: Partial<JetStreamPublishOptions["expect"]> = {};
    if (options.expect.lastSubjectSequence !== undefined)
      expect.lastSubjectSequence = options.expect.lastSubjectSequence;
    if (options.expect.lastMsgID !== undefined) expect.lastMsgID = options.expect.lastMsgID;
    opts.expect = expect;
  }
  try {
    return await bus.js.publish(subject, encodePayload(data), opts);
  } catch (err) {
    if (err instanceof JetStreamApiError && (err.code === WRONG_LAST_SEQUENCE || err.code === WRONG_LAST_MSG_ID)) {
      // The caller's view of the subject is stale (another writer got there first).
      throw new ConflictError(`Publish to ${subject} rejected: ${err.message}`, { cause: err });
    }
    throw err;
  }
}

/** Core NATS publish (fire and forget, not stored). */
export function publishCore(bus: Bus, subject: string, data: Payload, options: CorePublishOptions = {}): void {
  const send = () => bus.nc.publish(subject, encodePayload(data), { headers: messageHeaders(options.headers) });
  if (spansExported()) void producerSpan(subject, send);
  else send();
}

/**
 * Tells session caches that a session or one of its tasks changed (after the change committed).
 * Fire and forget, no headers: a lost hint leaves a cached view stale for at most its TTL
 * (docs/decisions.md "Session cache").
 */
export function publishSessionChanged(bus: Bus, sessionId: string): void {
  bus.nc.publish(systemSubjects(bus.prefix).sessionChanges, encoder.encode(sessionId));
}
