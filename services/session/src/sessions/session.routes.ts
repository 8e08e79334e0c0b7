import type { Request, Response, Router } from "express";
import type { z } from "zod";
import { requireJsonBody, type ApiDocs, type Auth, type RateLimits } from "@tog/edge";
import {
  deleteSessionRoute,
  getSessionEventsRoute,
  getSessionHistoryRoute,
  getSessionRoute,
  listSessionsRoute,
  renameSessionRoute,
  type SessionDetailSchema,
  type SessionListSchema,
  type SessionRenamedSchema,
} from "@tog/api";
import type { JsonBody, SessionService } from "./session.service.ts";
import { toRenamed, toSessionDetail, toSessionSummary } from "./session-views.ts";

// The six session endpoints, as libs/api defines them (docs/api.md "Sessions"). Each: auth →
// rate limit (the same per-key budget as the gateway's routes: same Redis counters) →
// validation → SessionService.

export interface SessionRoutesContext {
  router: Router;
  docs: ApiDocs;
  auth: Auth;
  limits: RateLimits;
  /** Resolved when a request arrives. */
  service: () => SessionService;
  /** For `expires_at` (0: sessions are kept forever). */
  retentionDays: number;
}

export function registerSessionRoutes(ctx: SessionRoutesContext): void {
  const { router, docs, auth, limits } = ctx;
  const userId = (req: Request) => req.principal!.userId;
  const guard = [auth.require(), limits.middleware()];

  docs.route(router, { ...listSessionsRoute, middleware: guard }, async (req, res, { query }) => {
    const page = await ctx.service().list(userId(req), query.limit, query.offset);
    res.json({ sessions: page.sessions.map(toSessionSummary), total_count: page.total } satisfies z.input<
      typeof SessionListSchema
    >);
  });

  docs.route(router, { ...getSessionRoute, middleware: guard }, async (req, res, { params }) => {
    const session = await ctx.service().get(userId(req), params.sessionId);
    res.json(toSessionDetail(session, ctx.retentionDays) satisfies z.input<typeof SessionDetailSchema>);
  });

  docs.route(router, { ...getSessionHistoryRoute, middleware: guard }, async (req, res, { params }) => {
    sendJson(res, await ctx.service().history(userId(req), params.sessionId));
  });

  docs.route(router, { ...getSessionEventsRoute, middleware: guard }, async (req, res, { params, query }) => {
    const body = await ctx.service().turns(userId(req), params.sessionId, {
      limit: query.limit,
      offset: query.offset,
      includePayload: query.include_payload,
    });
    sendJson(res, body);
  });

  docs.route(
    router,
    { ...renameSessionRoute, middleware: [...guard, requireJsonBody] },
    async (req, res, { params, body }) => {
      const session = await ctx.service().rename(userId(req), params.sessionId, body.title);
      res.json(toRenamed(session) satisfies z.input<typeof SessionRenamedSchema>);
    },
  );

  docs.route(router, { ...deleteSessionRoute, middleware: guard }, async (req, res, { params }) => {
    await ctx.service().remove(userId(req), params.sessionId);
    res.status(204).end();
  });
}

/** A body the service built as JSON text (history, turns): the headers `res.json` would send. */
function sendJson(res: Response, body: JsonBody): void {
  res.set("Content-Type", "application/json; charset=utf-8").send(body);
}
