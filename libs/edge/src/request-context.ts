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
    const span = tracer().startSpan(`${req.method} ${req.path}`, { kind: SpanKind.SERVER }, parent);
    const ctx = trace.setSpan(parent, span);
    req.traceId = span.spanContext().traceId;
    const started = process.hrtime.bigint();
    res.on("finish", () => {
      span.setAttribute("http.response.status_code", res.statusCode);
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
