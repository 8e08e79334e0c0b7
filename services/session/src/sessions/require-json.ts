import type { Request, RequestHandler } from "express";

// As the gateway's task routes: a request that carries a body that is not JSON is refused with
// 415 rather than read as "no body" (which would answer a misleading "title is required").

class UnsupportedMediaTypeError extends Error {
  readonly status = 415;
  readonly expose = true;
}

function hasBody(req: Request): boolean {
  if (req.headers["transfer-encoding"] !== undefined) return true;
  const length = req.headers["content-length"];
  return length !== undefined && length !== "0";
}

export const requireJsonBody: RequestHandler = (req, _res, next) => {
  if (hasBody(req) && !req.is("application/json")) {
    next(new UnsupportedMediaTypeError("Content-Type must be application/json"));
    return;
  }
  next();
};
