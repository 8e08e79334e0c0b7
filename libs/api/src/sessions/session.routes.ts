import { defineRoute, errorResponse, firstRuleMessage } from "@tog/edge";
import {
  ListSessionsQuery,
  RenameSessionBody,
  SessionIdParams,
  TITLE_MAX_CHARS,
  TurnsQuery,
} from "./request.schemas.ts";
import {
  SessionDetailSchema,
  SessionHistorySchema,
  SessionListSchema,
  SessionRenamedSchema,
  TurnsSchema,
} from "./response.schemas.ts";

// The six session endpoints (docs/api.md "Sessions"), served by the session service. Each:
// auth → rate limit (the same per-key budget as the gateway's routes: same Redis counters) →
// validation → SessionService.

const NOT_FOUND = errorResponse("`Session not found`: unknown id, or the session was deleted.");
const FORBIDDEN = errorResponse("`Forbidden`: another user's session.");

const ID_FORMS = "`{sessionId}` is the session's UUID or the external id it was created with.";

export const listSessionsRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions",
  summary: "List your sessions, most recent activity first",
  description:
    "Deleted sessions are left out. Order: `last_activity_at` descending (a task submitted or finished in a session moves it to the top), then `session_id`. " +
    "400 texts: `Invalid limit parameter: must be an integer from 1 to 100`, `Invalid offset parameter: must be an integer from 0 to 2147483647`.",
  tags: ["Sessions"],
  operationId: "listSessions",
  auth: "apiKey",
  rateLimited: true,
  query: ListSessionsQuery,
  invalidMessage: firstRuleMessage,
  responses: { 200: { description: "One page.", schema: SessionListSchema } },
});

export const getSessionRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/{sessionId}",
  summary: "Session metadata, token usage and task count",
  description: `${ID_FORMS} Another user's session → 403; a deleted one → 404.`,
  tags: ["Sessions"],
  operationId: "getSession",
  auth: "apiKey",
  rateLimited: true,
  params: SessionIdParams,
  responses: { 200: { description: "The session.", schema: SessionDetailSchema }, 403: FORBIDDEN, 404: NOT_FOUND },
});

export const getSessionHistoryRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/{sessionId}/history",
  summary: "Every task of the session with its execution details",
  description: `${ID_FORMS} Oldest first, not paged. Another user's session → 403; a deleted one → 404.`,
  tags: ["Sessions"],
  operationId: "getSessionHistory",
  auth: "apiKey",
  rateLimited: true,
  params: SessionIdParams,
  responses: {
    200: { description: "The session's tasks.", schema: SessionHistorySchema },
    403: FORBIDDEN,
    404: NOT_FOUND,
  },
});

export const getSessionEventsRoute = defineRoute({
  method: "get",
  path: "/api/v1/sessions/{sessionId}/events",
  summary: "The conversation: one turn per task with its events",
  description:
    `${ID_FORMS} A turn is one task of the session, oldest first; \`limit\` (1–100, default 10) and \`offset\` count turns. ` +
    "`turn` = offset + the turn's 1-based position in the page (the session's first task is turn 1). `count` = turns in this page, `total_count` = all turns. " +
    "Events exclude LLM_PARTIAL. `final_output` is the task's result, else the output of its first LLM_OUTPUT event. " +
    "A deleted session and another user's session both answer 404.",
  tags: ["Sessions"],
  operationId: "getSessionEvents",
  auth: "apiKey",
  rateLimited: true,
  params: SessionIdParams,
  query: TurnsQuery,
  invalidMessage: firstRuleMessage,
  responses: {
    200: { description: "One page of turns.", schema: TurnsSchema },
    404: errorResponse("`Session not found`: unknown, deleted, or another user's session."),
  },
});

export const renameSessionRoute = defineRoute({
  method: "patch",
  path: "/api/v1/sessions/{sessionId}",
  summary: "Rename a session",
  description:
    `${ID_FORMS} The title is normalized (NFC), line breaks and tabs become spaces, control, zero-width and bidirectional-control characters are removed ` +
    `(a zero-width joiner inside an emoji sequence is kept), surrounding whitespace is trimmed; the result must be 1–${TITLE_MAX_CHARS} characters counted as Unicode code points ` +
    "(a longer title is refused, never cut). 400 texts: `title is required`, `title must be a string`, " +
    "`title must not be empty (after removing control characters and surrounding whitespace)`, " +
    `\`title must be at most ${TITLE_MAX_CHARS} characters (got <n>)\`. A body that is not JSON → 415.`,
  tags: ["Sessions"],
  operationId: "renameSession",
  auth: "apiKey",
  rateLimited: true,
  params: SessionIdParams,
  body: RenameSessionBody,
  invalidMessage: firstRuleMessage,
  responses: {
    200: { description: "Renamed.", schema: SessionRenamedSchema },
    403: FORBIDDEN,
    404: NOT_FOUND,
    415: errorResponse("`Content-Type must be application/json`."),
  },
});

export const deleteSessionRoute = defineRoute({
  method: "delete",
  path: "/api/v1/sessions/{sessionId}",
  summary: "Delete a session (soft)",
  description:
    `${ID_FORMS} Records \`deleted_at\` and \`deleted_by\` and keeps the data (until the retention purge); the session's cache entries are dropped; ` +
    "reads of it answer 404 from then on and new tasks cannot join it. Deleting it again → 204. Another user's session → 403.",
  tags: ["Sessions"],
  operationId: "deleteSession",
  auth: "apiKey",
  rateLimited: true,
  params: SessionIdParams,
  responses: {
    204: { description: "Deleted (also when it already was)." },
    403: FORBIDDEN,
    404: errorResponse("`Session not found`: unknown id."),
  },
});

/** In the order the document lists them. */
export const SESSION_ROUTES = [
  listSessionsRoute,
  getSessionRoute,
  getSessionHistoryRoute,
  getSessionEventsRoute,
  renameSessionRoute,
  deleteSessionRoute,
] as const;
