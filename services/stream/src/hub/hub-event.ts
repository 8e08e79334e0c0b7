import { isTerminalEvent, toSseForm, type TaskEvent } from "@tog/events";

// An event as the fan-out holds it: decoded once per instance from the exact JSON text the
// worker published (or the log stored), framed once, and shared by every client. The
// WebSocket message is a view into the SSE frame, so the JSON exists once in memory.

export interface HubEvent {
  readonly seq: number;
  readonly type: string;
  readonly streamId: string;
  /** The task's last event (WORKFLOW_COMPLETED or a terminal ERROR_OCCURRED). */
  readonly terminal: boolean;
  /** `id: <stream_id>\nevent: <type>\ndata: <json>\n\n`. */
  readonly sse: Buffer;
  /** The SSE-form JSON in UTF-8: the WebSocket text message (a view into `sse`). */
  readonly json: Buffer;
  /** `sse` as one HTTP/1.1 chunk (built on first use by `httpChunkOf`). */
  chunk?: Buffer;
  /** `json` as one complete server WebSocket text frame (built on first use by `wsFrameOf`). */
  wsFrame?: Buffer;
}

/**
 * The SSE frame as one chunk of a chunked HTTP/1.1 body, built once per event: streams write it
 * to their sockets as is, so a client costs one buffer reference, not a chunk header each.
 */
export function httpChunkOf(event: HubEvent): Buffer {
  return (event.chunk ??= httpChunk(event.sse));
}

export function httpChunk(data: Buffer): Buffer {
  return Buffer.concat([Buffer.from(`${data.length.toString(16)}\r\n`, "latin1"), data, CRLF]);
}

const CRLF = Buffer.from("\r\n", "latin1");

/** The event as a complete unmasked WebSocket text frame (RFC 6455 5.2), built once per event. */
export function wsFrameOf(event: HubEvent): Buffer {
  if (event.wsFrame) return event.wsFrame;
  const length = event.json.length;
  let header: Buffer;
  if (length < 126) {
    header = Buffer.from([0x81, length]);
  } else if (length < 65_536) {
    header = Buffer.alloc(4);
    header[0] = 0x81;
    header[1] = 126;
    header.writeUInt16BE(length, 2);
  } else {
    header = Buffer.alloc(10);
    header[0] = 0x81;
    header[1] = 127;
    header.writeBigUInt64BE(BigInt(length), 2);
  }
  event.wsFrame = Buffer.concat([header, event.json]);
  return event.wsFrame;
}

const STREAM_ID_RE = /^\d{1,16}-\d{1,16}$/;
const TYPE_RE = /^[A-Z][A-Z_]{0,63}$/;

/**
 * Decodes one event text; null when it is not an event of `taskId` (logged by the caller).
 * Only what framing needs is checked: producers validate payloads when they build events.
 */
export function decodeHubEvent(text: string, taskId: string): HubEvent | null {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof parsed !== "object" || parsed === null) return null;
  const e = parsed as Partial<Record<keyof TaskEvent, unknown>>;
  if (e.workflow_id !== taskId) return null;
  if (typeof e.type !== "string" || !TYPE_RE.test(e.type)) return null;
  if (typeof e.seq !== "number" || !Number.isSafeInteger(e.seq) || e.seq < 1) return null;
  if (typeof e.stream_id !== "string" || !STREAM_ID_RE.test(e.stream_id)) return null;
  const event = parsed as TaskEvent;
  const form = toSseForm(event);
  // Most types have no top-level copies: their stream form is the published text itself, kept
  // byte for byte. A text with a raw line break (never produced by JSON.stringify) would break
  // the single `data:` line, so it is re-serialized.
  const json = form === event && !/[\r\n]/.test(text) ? text : JSON.stringify(form);
  const head = `id: ${event.stream_id}\nevent: ${event.type}\ndata: `;
  const sse = Buffer.from(`${head}${json}\n\n`, "utf8");
  const start = Buffer.byteLength(head, "utf8");
  return {
    seq: event.seq,
    type: event.type,
    streamId: event.stream_id,
    terminal: isTerminalEvent(event),
    sse,
    json: sse.subarray(start, sse.length - 2),
  };
}
