import type { Request, Router } from "express";
import type { z } from "zod";
import { defaultInvalidMessage, ErrorResponseSchema, type ApiDocs, type Auth, type RateLimits, type RequestPart, type RouteResponse } from "@tog/edge";
import { ListSessionsQuery, RenameSessionBody, SessionIdParams, TurnsQuery } from "./request.schemas.ts";
import { requireJsonBody } from "./require-json.ts";
import { SessionDetailSchema, SessionHistorySchema, SessionListSchema, SessionRenamedSchema, TurnsSchema } from "./response.schemas.ts";
import type { SessionService } from "./session.service.ts";
import { toHistoryTask, toRenamed, toSessionDetail, toSessionSummary, toTurn } from "./session-views.ts";
import { TITLE_MAX_CHARS } from "./title.ts";

// The six session endpoints (contract 4.11–4.16). Each: auth → rate limit (the same per-key
// budget as the gateway's routes: same Redis counters) → validation → SessionService.

export interface SessionRoutesContext {
  router: Router;
  docs: ApiDocs;
  auth: Auth;
  limits: RateLimits;
  /** Resolved when a request arrives, so the routes can be described without a database. */
  service: () => SessionService;
  /** For `expires_at` (0: sessions are kept forever). */
  retentionDays: number;
}

const error = (description: string): RouteResponse => ({ description, schema: ErrorResponseSchema });
const NOT_FOUND = error("`Session not found`: unknown id, or the session was deleted.");
const FORBIDDEN = error("`Forbidden`: another user's session.");

/** The exact text of the first failed rule (every rule here words its own message). */
const firstRule = (part: RequestPart, err: z.ZodError) => {
  const message = err.issues[0]?.message;
  return message === undefined || message.startsWith("Invalid input") ? defaultInvalidMessage(part, err) : message;
};

const ID_FORMS = "`{sessionId}` is the session's UUID or the external id it was created with.";

export function registerSessionRoutes(ctx: SessionRoutesContext): void {
  const { router, docs, auth, limits } = ctx;
  const userId = (req: Request) => req.principal!.userId;
  const guard = [auth.require(), limits.middleware()];

  docs.route(
    router,
    {
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
      middleware: guard,
      invalidMessage: firstRule,
      responses: { 200: { description: "One page.", schema: SessionListSchema } },
    },
    async (req, res, { query }) => {
      const page = await ctx.service().list(userId(req), query.limit, query.offset);
      res.json({ sessions: page.sessions.map(toSessionSummary), total_count: page.total } satisfies z.input<typeof SessionListSchema>);
    },
  );

  docs.route(
    router,
    {
      method: "get",
      path: "/api/v1/sessions/{sessionId}",
      summary: "Session metadata, token usage and task count",
      description: `${ID_FORMS} Another user's session → 403; a deleted one → 404.`,
      tags: ["Sessions"],
      operationId: "getSession",
      auth: "apiKey",
      rateLimited: true,
      params: SessionIdParams,
      middleware: guard,
      responses: { 200: { description: "The session.", schema: SessionDetailSchema }, 403: FORBIDDEN, 404: NOT_FOUND },
    },
    async (req, res, { params }) => {
      const session = await ctx.service().get(userId(req), params.sessionId);
      res.json(toSessionDetail(session, ctx.retentionDays) satisfies z.input<typeof SessionDetailSchema>);
    },
  );

  docs.route(
    router,
    {
      method: "get",
      path: "/api/v1/sessions/{sessionId}/history",
      summary: "Every task of the session with its execution details",
      description: `${ID_FORMS} Oldest first, not paged. Another user's session → 403; a deleted one → 404.`,
      tags: ["Sessions"],
      operationId: "getSessionHistory",
      auth: "apiKey",
      rateLimited: true,
      params: SessionIdParams,
      middleware: guard,
      responses: { 200: { description: "The session's tasks.", schema: SessionHistorySchema }, 403: FORBIDDEN, 404: NOT_FOUND },
    },
    async (req, res, { params }) => {
      const { session, tasks } = await ctx.service().history(userId(req), params.sessionId);
      res.json({ session_id: session.id, tasks: tasks.map(toHistoryTask), total: tasks.length } satisfies z.input<typeof SessionHistorySchema>);
    },
  );

  docs.route(
    router,
    {
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
      middleware: guard,
      invalidMessage: firstRule,
      responses: { 200: { description: "One page of turns.", schema: TurnsSchema }, 404: error("`Session not found`: unknown, deleted, or another user's session.") },
    },
    async (req, res, { params, query }) => {
      const page = await ctx.service().turns(userId(req), params.sessionId, { limit: query.limit, offset: query.offset, includePayload: query.include_payload });
      res.json({
        session_id: page.session.id,
        count: page.tasks.length,
        total_count: page.totalCount,
        limit: query.limit,
        offset: query.offset,
        turns: page.tasks.map((t, i) => toTurn(t, query.offset + i + 1)),
      } satisfies z.input<typeof TurnsSchema>);
    },
  );

  docs.route(
    router,
    {
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
      middleware: [...guard, requireJsonBody],
      invalidMessage: firstRule,
      responses: {
        200: { description: "Renamed.", schema: SessionRenamedSchema },
        403: FORBIDDEN,
        404: NOT_FOUND,
        415: error("`Content-Type must be application/json`."),
      },
    },
    async (req, res, { params, body }) => {
      const session = await ctx.service().rename(userId(req), params.sessionId, body.title);
      res.json(toRenamed(session) satisfies z.input<typeof SessionRenamedSchema>);
    },
  );

  docs.route(
    router,
    {
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
      middleware: guard,
      responses: { 204: { description: "Deleted (also when it already was)." }, 403: FORBIDDEN, 404: error("`Session not found`: unknown id.") },
    },
    async (req, res, { params }) => {
      await ctx.service().remove(userId(req), params.sessionId);
      res.status(204).end();
    },
  );
}
