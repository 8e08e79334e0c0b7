import type { Router } from "express";
import type { ApiDocs } from "@tog/edge";
import { describeEventSchemas, streamSseRoute, streamWsRoute } from "@tog/api";
import type { SseEndpoint } from "./sse/sse-endpoint.ts";
import type { HeaderList } from "./sse/sse-stream.ts";
import type { StreamContext } from "./stream-context.ts";

/**
 * Documents both endpoints (as libs/api defines them) and mounts them on the express app. In
 * the running service GET /api/v1/stream/sse is answered before express (sse-endpoint.ts); the
 * express route runs the same code for an app used on its own.
 */
export function registerStreamRoutes(router: Router, docs: ApiDocs, ctx: StreamContext, sse: SseEndpoint): void {
  describeEventSchemas(docs);
  docs.route(router, { ...streamSseRoute, middleware: [ctx.auth.require({ allowBearer: true })] }, async (req, res) => {
    const headers: HeaderList = [];
    try {
      await sse.open(req, res, headers);
    } catch (err) {
      // The error handler answers; the refusal carries the rate-limit headers too.
      for (let i = 0; i + 1 < headers.length; i += 2) res.setHeader(headers[i]!, headers[i + 1]!);
      throw err;
    }
  });

  docs.route(router, streamWsRoute, (_req, res) => {
    res.setHeader("Upgrade", "websocket");
    res.status(426).json({ error: "Expected a WebSocket upgrade" });
  });
}
