import type { RequestHandler } from "express";
import { PayloadTooLargeError, ValidationError } from "@tog/core";

// Input that no handler may see (docs/security.md, "Bad input"). PostgreSQL refuses U+0000 in
// text and jsonb, a lone UTF-16 surrogate cannot be encoded as UTF-8, and a very deep JSON
// value overflows the stack of every recursive consumer (JSON.stringify, idempotency hashing,
// zod). So all three are refused with a 400 here, right after the body is parsed and before any
// route, write or idempotency hash. One walk over the parsed body, bounded in depth (it stops
// at the limit, so it cannot overflow itself); each string is checked by two native scans.

/** Deepest accepted nesting of a JSON body, the body object itself being level 1. */
export const MAX_JSON_DEPTH = 32;

export const NUL_MESSAGE = "Invalid request: strings must not contain the NUL character (U+0000)";
export const SURROGATE_MESSAGE = "Invalid request: strings must be valid Unicode (lone UTF-16 surrogate)";
export const DEPTH_MESSAGE = `Invalid request: JSON nested too deeply (at most ${MAX_JSON_DEPTH} levels)`;

/** The reason `value` may not be accepted, or undefined when it is fine. */
export function badJsonReason(value: unknown, maxDepth = MAX_JSON_DEPTH): string | undefined {
  return walk(value, 1, maxDepth);
}

function walk(value: unknown, depth: number, maxDepth: number): string | undefined {
  if (typeof value === "string") return badStringReason(value);
  if (value === null || typeof value !== "object") return undefined;
  if (depth > maxDepth) return DEPTH_MESSAGE;
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const r = walk(value[i], depth + 1, maxDepth);
      if (r !== undefined) return r;
    }
    return undefined;
  }
  for (const key in value) {
    const k = badStringReason(key);
    if (k !== undefined) return k;
    const r = walk((value as Record<string, unknown>)[key], depth + 1, maxDepth);
    if (r !== undefined) return r;
  }
  return undefined;
}

export function badStringReason(s: string): string | undefined {
  if (s.includes("\u0000")) return NUL_MESSAGE;
  if (!s.isWellFormed()) return SURROGATE_MESSAGE;
  return undefined;
}

/**
 * A declared Content-Length over the limit is answered 413 at once, before any body byte is
 * read, and the connection is closed so the rest is never read either.
 */
export function rejectOversizedBody(maxBodyBytes: number): RequestHandler {
  return (req, res, next) => {
    const declared = req.headers["content-length"];
    if (declared !== undefined && Number(declared) > maxBodyBytes) {
      res.setHeader("Connection", "close");
      next(new PayloadTooLargeError("Request body too large"));
      return;
    }
    next();
  };
}

/**
 * NUL in the URL (path or query, as `%00`) and NUL, lone surrogates or excessive depth in the
 * parsed JSON body → 400. Percent-encoded surrogates are invalid UTF-8 and never decode to one.
 */
export const guardInput: RequestHandler = (req, _res, next) => {
  if (req.url.includes("%00")) {
    next(new ValidationError(NUL_MESSAGE));
    return;
  }
  const body: unknown = req.body;
  if (body !== undefined && body !== null && typeof body === "object") {
    const reason = badJsonReason(body);
    if (reason !== undefined) {
      next(new ValidationError(reason));
      return;
    }
  }
  next();
};
