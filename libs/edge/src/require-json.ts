import type { Request, RequestHandler } from "express";

// JSON bodies use `Content-Type: application/json` (docs/api.md "Requests"). A request that
// carries a body of another type is refused with 415 instead of being read as "no body" (which
// would answer a misleading "Query is required" or "title is required"). A request without a
// body needs no Content-Type, so `POST /tasks/{id}/cancel` can be sent bare. Mounted on every
// route that reads a body, in the gateway and the session service.

/** A 4xx error the edge's error mapper turns into `{"error": message}` with this status. */
class UnsupportedMediaTypeError extends Error {
  readonly status = 415;
  readonly expose = true;
}

export const CONTENT_TYPE_MESSAGE = "Content-Type must be application/json";

function hasBody(req: Request): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (hasBody(req) && !req.is("application/json")) {
    next(new UnsupportedMediaTypeError(CONTENT_TYPE_MESSAGE));
    return;
  }
  next();
};
