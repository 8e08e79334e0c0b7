import cors from "cors";
import type { RequestHandler } from "express";

export interface CorsSettings {
  /** development: `*`; production: only the listed origins, each answered with itself. */
  mode: "development" | "production";
  allowedOrigins: string[];
}

// GET, POST, PUT, DELETE, OPTIONS, and PATCH for PATCH /sessions/{id} (docs/api.md "Requests").
export const CORS_METHODS = ["GET", "POST", "PUT", "PATCH", "DELETE", "OPTIONS"];
export const CORS_ALLOWED_HEADERS = [
  "Content-Type",
  "Authorization",
  "X-API-Key",
  "Idempotency-Key",
  "traceparent",
  "tracestate",
  "Last-Event-ID",
  "Cache-Control",
];
export const CORS_EXPOSED_HEADERS = [
  "X-Workflow-ID",
  "X-Session-ID",
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "Retry-After",
  "X-Idempotency-Cached",
  "X-Idempotency-Key",
];

/**
 * Runs before auth and rate limits, so a preflight (any OPTIONS) is answered here with 204
 * and never reaches them. In production the `cors` package, given the origin list, answers
 * with the one matching origin (never the list itself) plus `Vary: Origin`, and sends no
 * Access-Control-Allow-Origin for an unknown origin (the browser then blocks the call).
 */
export function createCors(settings: CorsSettings): RequestHandler {
  return cors({
    origin: settings.mode === "development" ? "*" : [...settings.allowedOrigins],
    methods: CORS_METHODS.join(", "),
    allowedHeaders: CORS_ALLOWED_HEADERS.join(", "),
    exposedHeaders: CORS_EXPOSED_HEADERS.join(", "),
    maxAge: 3600,
    optionsSuccessStatus: 204,
  });
}
