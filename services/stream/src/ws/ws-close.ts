// Close codes of the WebSocket endpoint. Contract 4.10 allows only events and {"type":"pong"} as
// server messages, so a refusal is told by the close frame (code + reason), never by a message
// (docs/decisions.md "WebSocket server messages").

/** Server shutdown (1012 "service restart"): resubscribe elsewhere with last_event_id. */
export const CLOSE_RESTART = 1012;
/** A client dropped for falling too far behind (1013 "try again later"): resubscribe with last_event_id. */
export const CLOSE_SLOW_CONSUMER = 1013;
/** An unexpected server error (1011 "internal error"). */
export const CLOSE_INTERNAL = 1011;
/**
 * A refused client message closes with 4000 + the HTTP status the same refusal gets over HTTP:
 * 4400 malformed or invalid, 4404 not found or not owned, 4429 over the message rate, 4502/4503
 * event store unavailable (application range 4000–4999 of RFC 6455 7.4.2).
 */
export const CLOSE_REFUSED_BASE = 4000;

/** RFC 6455 5.5: a control frame's payload is at most 125 bytes, 2 of them the code. */
const MAX_REASON_BYTES = 123;

/** The close code for a refusal with this HTTP status (1011 for a 500). */
export function refusalCode(status: number): number {
  return status >= 400 && status <= 599 && status !== 500 ? CLOSE_REFUSED_BASE + status : CLOSE_INTERNAL;
}

/** The close reason: the error message, naming the task when it fits, cut to 123 bytes. */
export function closeReason(message: string, taskId?: string): string {
  const named = taskId === undefined ? message : `${message} (workflow_id ${taskId})`;
  if (Buffer.byteLength(named) <= MAX_REASON_BYTES) return named;
  if (Buffer.byteLength(message) <= MAX_REASON_BYTES) return message;
  let cut = "";
  for (const ch of message) {
    if (Buffer.byteLength(cut + ch) > MAX_REASON_BYTES - 3) break;
    cut += ch;
  }
  return `${cut}…`;
}
