import { z } from "zod";
import { EVENT_TYPES, STREAM_EVENT_SCHEMA } from "@tog/events";
import { defineRoute, ErrorResponseSchema, RATE_LIMIT_HEADERS } from "@tog/edge";

// The two streaming endpoints (docs/api.md "Streaming"), served by the stream service. The
// decisions (resume, filter, end of stream, slow consumers, WebSocket messages) are in the
// descriptions, so the document says what the code does.

export const SSE_PATH = "/api/v1/stream/sse";
export const WS_PATH = "/api/v1/stream/ws";

/** One string; a missing required parameter and a repeated one get messages of their own. */
const param = (name: string) =>
  z.string({
    error: (issue) => (issue.input === undefined ? `${name} is required` : `Invalid ${name} parameter: give it once`),
  });

const SseQuerySchema = z.object({
  workflow_id: param("workflow_id").openapi({
    description: "Task/workflow id (required; 400 without it).",
    example: "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d",
  }),
  types: param("types")
    .optional()
    .openapi({
      description: `Comma-separated event types to send, exact and case-sensitive (${EVENT_TYPES.length} accepted names); an unknown name → 400 naming it. The terminal event still ends the stream when it is filtered out.`,
      example: "LLM_OUTPUT,WORKFLOW_COMPLETED",
    }),
  last_event_id: param("last_event_id").optional().openapi({
    description:
      "Resume point: `<millis>-<seq>` (a stream id) or a non-negative integer n; events with seq > n are replayed. `0` or empty = from the first event. Malformed → 400. The Last-Event-ID header wins when both are sent.",
    example: "1767225600000-42",
  }),
});

const WsQuerySchema = z.object({
  workflow_id: param("workflow_id")
    .optional()
    .openapi({ description: "Subscribe to this workflow at connect (same rules as a `subscribe` message)." }),
  types: param("types").optional().openapi({ description: "Filter of the initial subscription (comma-separated)." }),
  last_event_id: param("last_event_id")
    .optional()
    .openapi({ description: "Resume point of the initial subscription." }),
});

const RATE_LIMIT_NOTE =
  'Rate limit: opening a stream (this request) counts per API key (per user with auth off) in the streams\' own bucket, RATE_LIMIT_STREAM_RPM per minute (6000) and RATE_LIMIT_STREAM_BURST per second (500), apart from the other endpoints\' RATE_LIMIT_RPM; events on an open stream never count. The response (and every refusal after authentication) carries `X-RateLimit-Limit` (the per-minute limit), `X-RateLimit-Remaining` and `X-RateLimit-Reset` (Unix seconds); over the limit → 429 `{"error":"Rate limit exceeded","retry_after":n}` with `Retry-After`. The limits are high so that resumes never hit them; only a runaway reconnect loop does.';

const SSE_DESCRIPTION = [
  "Server-Sent Events of one workflow. Credentials by header only (`X-API-Key` or `Authorization: Bearer`); any credential in the query string → 401. Only the task's owner may stream it; an unknown workflow or another user's → 404 `Task not found`, before any stream starts.",
  "",
  "Each message: `id: <stream_id>`, `event: <type>`, `data: <json>`, blank line. `data` is the event of 6.1 with top-level copies (`result`, `tool`, `params`, `status`). The stream opens with a comment and `retry: <STREAM_RETRY_MS>`; a `: ping` comment (or, when filtered events moved the position on, an `id:` line without data) follows every STREAM_KEEPALIVE_MS (15 s).",
  "",
  "Replay then live, no gap and no duplicate at the seam: events after the resume point come from the real-time cache (JetStream), or from the permanent log (PostgreSQL) when they are older than the cache, then live. After the terminal event (WORKFLOW_COMPLETED, or ERROR_OCCURRED with `terminal: true`) the response ends; a client resuming at or past the terminal event gets **204** (EventSource then stops reconnecting).",
  "",
  "Delivery is at least once: deduplicate by `seq`. On reconnect send the last `id` seen as `Last-Event-ID` (EventSource does). A client whose unsent data exceeds STREAM_MAX_BUFFER_BYTES (1 MiB) is disconnected and resumes from its last id. At most STREAM_MAX_CONNECTIONS streams per instance (503 beyond).",
  "",
  RATE_LIMIT_NOTE,
].join("\n");

const WS_DESCRIPTION = [
  "WebSocket. Credentials in the handshake headers only (`X-API-Key` or `Authorization: Bearer`); a credential in the query → 401. In production a browser's Origin must be in CORS_ALLOWED_ORIGINS (403). With `workflow_id` in the query the connection subscribes to it at connect (400/404 refuse the handshake).",
  "",
  'Client messages (JSON text): `{"type":"subscribe","workflow_id":"…","types":["LLM_OUTPUT"] (or "A,B"),"last_event_id":"<millis>-<seq>" or n}` (replay after that point, then live; subscribing again to the same workflow replaces the subscription), `{"type":"unsubscribe","workflow_id":"…"}`, `{"type":"ping"}`.',
  "",
  'Server messages: events (SSE-form JSON, each naming its `workflow_id`) and `{"type":"pong"}`; subscribe and unsubscribe are not acknowledged. A subscription ends with the workflow\'s terminal event (WORKFLOW_COMPLETED, or ERROR_OCCURRED with `data.terminal`), which is sent even when `types` leaves it out; the socket stays open. There is no error message: a message the server refuses closes the connection with code **4000 + the HTTP status** the same refusal gets over HTTP and the error message (naming the workflow when it fits) as close reason: 4400 malformed, unknown type, binary, invalid field or too many subscriptions; 4404 unknown or another user\'s workflow; 4429 over STREAM_WS_MAX_MESSAGES_PER_SECOND (100) client messages and pings per second; 4502/4503 event store unavailable (retry); 1011 unexpected server error. An `unsubscribe` of a workflow not subscribed is ignored.',
  "",
  "Several workflows per connection (STREAM_WS_MAX_SUBSCRIPTIONS, 100). Server pings every STREAM_KEEPALIVE_MS; a peer that misses one is dropped. A slow client (unsent data over STREAM_MAX_BUFFER_BYTES) is closed with 1013; a restarting instance closes with 1012: after these and 4429/4502/4503 reconnect and resubscribe with each workflow's last seq as `last_event_id`; 4400/4404 are not worth retrying.",
  "",
  RATE_LIMIT_NOTE,
].join("\n");

export const streamSseRoute = defineRoute({
  method: "get",
  path: SSE_PATH,
  summary: "Stream a workflow's events (SSE)",
  description: SSE_DESCRIPTION,
  tags: ["Streaming"],
  operationId: "streamSse",
  auth: "apiKeyOrBearer",
  rateLimited: true,
  query: SseQuerySchema,
  headers: z.object({
    "Last-Event-ID": z.string().optional().openapi({
      description:
        "Resume point sent on reconnect (EventSource does): same forms as `last_event_id`, and wins over it.",
      example: "1767225600000-42",
    }),
  }),
  invalidMessage: (_part, error) => error.issues[0]?.message ?? "Invalid query",
  responses: {
    200: {
      description:
        "The event stream. Each message's `event:` is the event type and its `data:` line is the JSON of that type's schema (`StreamEvent`, one schema per type).",
      contentType: "text/event-stream",
      schemaRef: STREAM_EVENT_SCHEMA,
    },
    204: { description: "The workflow ended at or before the resume point: nothing to send." },
    404: { description: "Unknown workflow, or another user's: `Task not found`." },
    502: { description: "The event store (NATS) is unavailable." },
    503: { description: "This instance holds STREAM_MAX_CONNECTIONS streams." },
  },
});

export const streamWsRoute = defineRoute({
  method: "get",
  path: WS_PATH,
  summary: "Stream events of several workflows (WebSocket)",
  description: WS_DESCRIPTION,
  tags: ["Streaming"],
  operationId: "streamWs",
  auth: "apiKeyOrBearer",
  query: WsQuerySchema,
  responses: {
    101: {
      description:
        'Switching protocols: the WebSocket is open. Server messages are `StreamEvent` objects and `{"type":"pong"}`.',
      contentType: "application/json",
      schemaRef: STREAM_EVENT_SCHEMA,
      headers: RATE_LIMIT_HEADERS,
    },
    // Documented by hand, not with `rateLimited`: the plain GET (426) is answered before authentication and not
    // counted.
    429: {
      description:
        "Too many stream opens (RATE_LIMIT_STREAM_RPM / RATE_LIMIT_STREAM_BURST): the handshake is refused with `Rate limit exceeded` and `retry_after`.",
      schema: ErrorResponseSchema,
      headers: {
        ...RATE_LIMIT_HEADERS,
        "Retry-After": { description: "Seconds to wait before retrying.", schema: { type: "integer" } },
      },
    },
    426: { description: "A plain GET without the WebSocket upgrade." },
  },
});

/** In the order the document lists them. */
export const STREAM_ROUTES = [streamSseRoute, streamWsRoute] as const;
