import type { Request, RequestHandler, Response } from "express";
import {
  autoInstrumented,
  context,
  extractTraceContext,
  setHttpRoute,
  SpanKind,
  trace,
  tracer,
  type Context,
  type Logger,
  type Span,
} from "@tog/core";

export interface RequestContextOptions {
  logger: Logger;
}

/** `/api/v1/tasks/:id` once routing matched; undefined before or without a route (404s). */
function routeOf(req: Request): string | undefined {
  return req.route?.path === undefined ? undefined : `${req.baseUrl}${String(req.route.path)}`;
}

/**
 * The request's server span: a valid `traceparent` continues that trace (with its `tracestate`),
 * anything else starts a new one. Everything downstream, including every log line, runs inside
 * the span's context. One line is logged per finished request. Spans are named by route
 * template (`GET /api/v1/tasks/:id`, never one name per task id).
 *
 * With the telemetry preload's instrumentations (spans exported), the HTTP instrumentation has
 * already started that span: it is used, given its route, and ended by the instrumentation.
 * Otherwise the span is made here (docs/architecture.md, "Tracing").
 */
export function createRequestContext(options: RequestContextOptions): RequestHandler {
  const { logger } = options;
  const logLine = (req: Request, res: Response, ctx: Context, started: bigint) =>
    context.with(ctx, () =>
      logger.info(
        {
          method: req.method,
          path: req.path,
          status: res.statusCode,
          duration_ms: Number(process.hrtime.bigint() - started) / 1e6,
        },
        "request",
      ),
    );

  return (req, res, next) => {
    const started = process.hrtime.bigint();
    const active = autoInstrumented() ? trace.getActiveSpan() : undefined;
    if (active) {
      const ctx = context.active();
      req.traceId = active.spanContext().traceId;
      res.on("finish", () => {
        setHttpRoute(routeOf(req), ctx);
        logLine(req, res, ctx, started);
      });
      next();
      return;
    }
    const parent = extractTraceContext(req.headers);
    const span: Span = tracer().startSpan(
      req.method,
      { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } },
      parent,
    );
    const ctx = trace.setSpan(parent, span);
    req.traceId = span.spanContext().traceId;
    res.on("finish", () => {
      span.setAttribute("http.response.status_code", res.statusCode);
      const route = routeOf(req);
      if (route !== undefined) {
        span.setAttribute("http.route", route);
        span.updateName(`${req.method} ${route}`);
      }
      span.end();
      logLine(req, res, ctx, started);
    });
    context.with(ctx, () => next());
  };
}
