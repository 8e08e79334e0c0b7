import type { RequestHandler } from "express";
import { context, extractTraceContext, SpanKind, trace, tracer, type Logger } from "@tog/core";

export interface RequestContextOptions {
  logger: Logger;
}

/**
 * Starts the request's server span: a valid `traceparent` continues that trace (with its
 * `tracestate`), anything else starts a new one. Everything downstream, including every log
 * line, runs inside the span's context. One line is logged per finished request.
 */
export function createRequestContext(options: RequestContextOptions): RequestHandler {
  const { logger } = options;
  return (req, res, next) => {
    const parent = extractTraceContext(req.headers);
    // Named by method now and by route template once routing matched (semantic conventions:
    // `GET /api/v1/tasks/:id`, never one name per task id).
    const span = tracer().startSpan(req.method, { kind: SpanKind.SERVER, attributes: { "http.request.method": req.method } }, parent);
    const ctx = trace.setSpan(parent, span);
    req.traceId = span.spanContext().traceId;
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      span.setAttribute("http.response.status_code", res.statusCode);
      const route = req.route?.path === undefined ? undefined : `${req.baseUrl}${String(req.route.path)}`;
      if (route !== undefined) {
        span.setAttribute("http.route", route);
        span.updateName(`${req.method} ${route}`);
      }
      span.end();
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
    });
    context.with(ctx, () => next());
  };
}
