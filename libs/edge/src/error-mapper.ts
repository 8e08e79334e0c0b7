import type { ErrorRequestHandler, Response } from "express";
import {
  AppError,
  isDependencyUnavailable,
  OverloadedError,
  RateLimitedError,
  type ErrorCode,
  type Logger,
} from "@tog/core";

// The one place where errors become HTTP responses. Every body is `{"error": "..."}`
// (plus the error's own details, e.g. `retry_after`); unknown errors become a 500 whose
// text never reveals internals.

const STATUS: Record<ErrorCode, number> = {
  VALIDATION: 400,
  UNAUTHORIZED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  RATE_LIMITED: 429,
  UPSTREAM_UNAVAILABLE: 502,
  OVERLOADED: 503,
  CONFIG: 500,
  INTERNAL: 500,
};

export function statusOf(err: AppError): number {
  return STATUS[err.code];
}

export function sendError(res: Response, err: AppError): void {
  if (err instanceof RateLimitedError) {
    res.setHeader("Retry-After", String(err.retryAfterSeconds));
    res.setHeader("X-RateLimit-Remaining", "0");
  }
  // Every 503 says when to come back, so clients back off instead of hammering (docs/reliability.md).
  if (err instanceof OverloadedError) res.setHeader("Retry-After", String(err.retryAfterSeconds));
  jsonError(res, statusOf(err), { error: err.message, ...err.details });
}

/**
 * The error body as JSON. The type is set here because `res.json` keeps a Content-Type set
 * earlier, e.g. `text/html` by a static file answer that then failed (a 416 for a bad Range).
 */
function jsonError(res: Response, status: number, body: Record<string, unknown>): void {
  res.setHeader("Content-Type", "application/json; charset=utf-8");
  res.status(status).json(body);
}

/** Errors that body-parser and express raise for client mistakes. */
interface HttpishError {
  status?: number;
  statusCode?: number;
  type?: string;
  message?: string;
  expose?: boolean;
}

export function createErrorHandler(logger: Logger): ErrorRequestHandler {
  return (err: unknown, req, res, next) => {
    if (res.headersSent) {
      next(err);
      return;
    }
    if (err instanceof AppError) {
      // Shedding (503 Overloaded) is the designed answer to too much load, counted by the HTTP
      // metrics; an error line per shed request made the overload itself worse.
      if (err.code === "OVERLOADED") logger.debug({ err, path: req.path }, "request shed");
      else if (statusOf(err) >= 500) logger.error({ err, path: req.path }, "request failed");
      sendError(res, err);
      return;
    }
    const e = (err ?? {}) as HttpishError;
    const status = e.status ?? e.statusCode;
    if (e.type === "entity.parse.failed") {
      jsonError(res, 400, { error: `Invalid request body: ${e.message ?? "malformed JSON"}` });
      return;
    }
    if (e.type === "entity.too.large") {
      // Close instead of reading the rest of a body that will never be used.
      res.setHeader("Connection", "close");
      jsonError(res, 413, { error: "Request body too large" });
      return;
    }
    if (typeof status === "number" && status >= 400 && status < 500 && e.expose !== false) {
      jsonError(res, status, { error: e.message ?? "Bad request" });
      return;
    }
    if (isDependencyUnavailable(err)) {
      // A database or Redis restarting is not a bug: the client may retry shortly.
      logger.warn({ err, path: req.path }, "dependency unavailable");
      sendError(res, new OverloadedError("Service temporarily unavailable", { cause: err }));
      return;
    }
    logger.error({ err, path: req.path }, "unhandled error");
    jsonError(res, 500, { error: "Internal server error" });
  };
}
