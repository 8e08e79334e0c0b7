import { isUuid, ValidationError } from "@tog/core";
import { parseEventTypeFilter, parseResumePoint } from "@tog/events";

// What a client asks for, from an SSE query, a WebSocket handshake query or a WebSocket
// `subscribe` message: one task, an optional type filter, an optional resume point.

export interface StreamRequest {
  /** Lower-cased when it is a UUID (task ids are), so subjects match the workers'. */
  taskId: string;
  filter: ReadonlySet<string> | null;
  /** Replay events with seq greater than this; 0 = from the first event. */
  resumeAfter: number;
}

export function normalizeTaskId(value: unknown): string {
  if (value === undefined || value === null || value === "") throw new ValidationError("workflow_id is required");
  if (typeof value !== "string") throw new ValidationError("Invalid workflow_id parameter: expected one string");
  const trimmed = value.trim();
  if (trimmed === "") throw new ValidationError("workflow_id is required");
  return isUuid(trimmed) ? trimmed.toLowerCase() : trimmed;
}

/** A query parameter given once (a repeated one is refused rather than guessed). */
export function single(name: string, value: unknown): string | undefined {
  if (value === undefined) return undefined;
  if (typeof value === "string") return value;
  throw new ValidationError(`Invalid ${name} parameter: give it once`);
}

/** A resume value: `<millis>-<seq>`, a non-negative integer (string or number), or absent. */
export function resumeAfterOf(value: unknown, parameter: string): number {
  if (value === undefined || value === null) return 0;
  if (typeof value === "number") {
    if (!Number.isSafeInteger(value) || value < 0) {
      throw new ValidationError(
        `Invalid ${parameter}: ${JSON.stringify(value)} (expected <millis>-<seq> or a non-negative integer)`,
      );
    }
    return value;
  }
  if (typeof value !== "string") {
    throw new ValidationError(`Invalid ${parameter}: expected <millis>-<seq> or a non-negative integer`);
  }
  return parseResumePoint(value, parameter) ?? 0;
}

/**
 * SSE and WebSocket handshake: `workflow_id`, `types`, `last_event_id` from the query and the
 * `Last-Event-ID` header. Both resume values are validated; the header wins when it is set
 * (EventSource sends it on every reconnect while the URL keeps the original query value).
 */
export function streamRequestFromQuery(
  query: Record<string, unknown>,
  lastEventIdHeader: string | string[] | undefined,
): StreamRequest {
  const taskId = normalizeTaskId(single("workflow_id", query.workflow_id));
  const filter = parseEventTypeFilter(single("types", query.types)) as ReadonlySet<string> | null;
  const fromQuery = resumeAfterOf(single("last_event_id", query.last_event_id), "last_event_id");
  if (Array.isArray(lastEventIdHeader)) throw new ValidationError("Invalid Last-Event-ID: give it once");
  const header = lastEventIdHeader?.trim() ?? "";
  const fromHeader = header === "" ? undefined : resumeAfterOf(header, "Last-Event-ID");
  return { taskId, filter, resumeAfter: fromHeader ?? fromQuery };
}

/** URLSearchParams as an object; a repeated parameter stays an array (and is refused as such). */
export function groupQuery(params: URLSearchParams): Map<string, string | string[]> {
  const out = new Map<string, string | string[]>();
  for (const [key, value] of params) {
    const prev = out.get(key);
    out.set(key, prev === undefined ? value : Array.isArray(prev) ? [...prev, value] : [prev, value]);
  }
  return out;
}
