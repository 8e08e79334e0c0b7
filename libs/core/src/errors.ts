// The few named errors of the system. Each carries a stable `code`; the HTTP layer maps
// codes to statuses in one place (libs/edge/src/error-mapper.ts) and gRPC maps them to
// status codes in its own single place.

export type ErrorCode =
  | "VALIDATION"
  | "UNAUTHORIZED"
  | "FORBIDDEN"
  | "NOT_FOUND"
  | "CONFLICT"
  | "PAYLOAD_TOO_LARGE"
  | "RATE_LIMITED"
  | "UPSTREAM_UNAVAILABLE"
  | "OVERLOADED"
  | "CONFIG"
  | "INTERNAL";

export interface AppErrorOptions {
  cause?: unknown;
  /** Extra JSON fields for the response body, next to `error`. */
  details?: Record<string, unknown>;
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: Record<string, unknown> | undefined;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.details = options.details;
  }
}

/** The client sent something we cannot accept (400). */
export class ValidationError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super("VALIDATION", message, options);
  }
}

/** Missing or invalid credentials (401). The message is always `Unauthorized` (docs/api.md "Errors"). */
export class UnauthorizedError extends AppError {
  constructor(options?: AppErrorOptions) {
    super("UNAUTHORIZED", "Unauthorized", options);
  }
}

/** Authenticated, but not the owner (403). */
export class ForbiddenError extends AppError {
  constructor(message = "Forbidden", options?: AppErrorOptions) {
    super("FORBIDDEN", message, options);
  }
}

export class NotFoundError extends AppError {
  constructor(message = "Not found", options?: AppErrorOptions) {
    super("NOT_FOUND", message, options);
  }
}

export class ConflictError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super("CONFLICT", message, options);
  }
}

export class PayloadTooLargeError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super("PAYLOAD_TOO_LARGE", message, options);
  }
}

export class RateLimitedError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(retryAfterSeconds: number, options?: AppErrorOptions) {
    super("RATE_LIMITED", "Rate limit exceeded", {
      ...options,
      details: { retry_after: retryAfterSeconds, ...options?.details },
    });
    this.retryAfterSeconds = retryAfterSeconds;
  }
}

/** A dependency we call (orchestrator, provider, ...) cannot be reached (502). */
export class UpstreamUnavailableError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super("UPSTREAM_UNAVAILABLE", message, options);
  }
}

/** We are shedding load or a dependency is briefly gone (503); the client may retry after `retryAfterSeconds`. */
export class OverloadedError extends AppError {
  readonly retryAfterSeconds: number;
  constructor(message = "Service overloaded", options?: AppErrorOptions & { retryAfterSeconds?: number }) {
    super("OVERLOADED", message, options);
    this.retryAfterSeconds = options?.retryAfterSeconds ?? 1;
  }
}

/** Configuration is invalid; raised at start-up only. */
export class ConfigError extends AppError {
  constructor(message: string, options?: AppErrorOptions) {
    super("CONFIG", message, options);
  }
}

export function isAppError(value: unknown): value is AppError {
  return value instanceof AppError;
}

// SQLSTATEs of a database that is gone or restarting: connection exceptions (class 08),
// admin/crash shutdown and "starting up" (57P01–57P03).
const UNAVAILABLE_SQLSTATE = /^(08...|57P0[123])$/;
const UNAVAILABLE_ERRNO = new Set(["ECONNREFUSED", "ECONNRESET", "EPIPE", "ETIMEDOUT", "EHOSTUNREACH", "ENOTCONN"]);
// Prisma's codes for an unreachable or closed database; pg's text for a connection cut mid-query.
const UNAVAILABLE_PRISMA = new Set(["P1001", "P1002", "P1017"]);
const UNAVAILABLE_TEXT =
  /Connection terminated|connection (?:is )?closed|Client has encountered a connection error|timeout exceeded when trying to connect|Can't reach database server|Code: `(?:08[0-9A-Z]{3}|57P0[123])`/i;

/**
 * Whether a failure means a dependency (PostgreSQL, Redis, a socket) is briefly unreachable
 * rather than a bug: such errors answer 503 with Retry-After instead of 500
 * (docs/reliability.md). Looks through `cause` chains and AggregateErrors.
 */
export function isDependencyUnavailable(err: unknown, depth = 0): boolean {
  if (depth > 6 || err === null || typeof err !== "object") return false;
  const e = err as {
    code?: unknown;
    errno?: unknown;
    message?: unknown;
    cause?: unknown;
    errors?: unknown;
    meta?: { code?: unknown };
  };
  for (const code of [e.code, e.meta?.code]) {
    if (typeof code !== "string") continue;
    if (UNAVAILABLE_SQLSTATE.test(code) || UNAVAILABLE_ERRNO.has(code) || UNAVAILABLE_PRISMA.has(code)) return true;
  }
  if (typeof e.message === "string" && UNAVAILABLE_TEXT.test(e.message)) return true;
  if (Array.isArray(e.errors) && e.errors.some((x) => isDependencyUnavailable(x, depth + 1))) return true;
  return isDependencyUnavailable(e.cause, depth + 1);
}
