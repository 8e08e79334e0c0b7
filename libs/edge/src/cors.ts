import cors from "cors";
import type { RequestHandler } from "express";

export interface CorsSettings {
  /** development: `*`; production: only the listed origins, each answered with itself. */
  mode: "development" | "production";
  allowedOrigins: string[];
}

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

export function createCors(settings: CorsSettings): RequestHandler {
  const allowed = new Set(settings.allowedOrigins);
  return cors({
    origin:
      settings.mode === "development"
        ? "*"
        : (origin, callback) => callback(null, origin !== undefined && allowed.has(origin) ? origin : false),
    methods: CORS_METHODS,
    allowedHeaders: CORS_ALLOWED_HEADERS,
    exposedHeaders: CORS_EXPOSED_HEADERS,
    maxAge: 3600,
  });
}
