// The one place where @tog/core errors become gRPC statuses and back. An AppError thrown
// by the orchestrator travels as a status code plus trailing metadata carrying its exact
// code and details, so the gateway rebuilds the same error (same class, message, details).
// A status without that metadata comes from the transport (unreachable, deadline, ...)
// and is mapped by status code alone.
import { Metadata, status, type ServiceError, type StatusObject } from "@grpc/grpc-js";
import {
  AppError,
  ConflictError,
  isDependencyUnavailable,
  ForbiddenError,
  NotFoundError,
  OverloadedError,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamUnavailableError,
  ValidationError,
  type ErrorCode,
} from "@tog/core";

export const ERROR_CODE_KEY = "tog-error-code";
export const ERROR_DETAILS_KEY = "tog-error-details";

/** Status message of every internal failure; the real error stays in the server's log. */
export const INTERNAL_MESSAGE = "Internal error";
/** What the gateway's HTTP clients see for an internal orchestrator failure (same text as the edge's 500). */
const INTERNAL_HTTP_MESSAGE = "Internal server error";

const STATUS_OF: Record<ErrorCode, status> = {
  VALIDATION: status.INVALID_ARGUMENT,
  UNAUTHORIZED: status.UNAUTHENTICATED,
  FORBIDDEN: status.PERMISSION_DENIED,
  NOT_FOUND: status.NOT_FOUND,
  CONFLICT: status.FAILED_PRECONDITION,
  PAYLOAD_TOO_LARGE: status.INVALID_ARGUMENT,
  RATE_LIMITED: status.RESOURCE_EXHAUSTED,
  UPSTREAM_UNAVAILABLE: status.UNAVAILABLE,
  OVERLOADED: status.RESOURCE_EXHAUSTED,
  CONFIG: status.INTERNAL,
  INTERNAL: status.INTERNAL,
};

const ERROR_CODES = new Set<string>(Object.keys(STATUS_OF));

/** Whether an error's text may cross the wire; internal ones are replaced by INTERNAL_MESSAGE. */
export function isInternal(err: unknown): boolean {
  return !(err instanceof AppError) || err.code === "INTERNAL" || err.code === "CONFIG";
}

// Non-binary metadata values must be printable ASCII; JSON allows escaping everything else.
const asciiJson = (value: unknown) =>
  JSON.stringify(value).replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);

/** What crosses the wire of an error thrown by the implementation: its code, message and details. */
export interface WireError {
  code: ErrorCode;
  message: string;
  details?: Record<string, unknown> | undefined;
}

export function wireErrorOf(err: unknown): WireError {
  // The database restarting is not an internal failure: the caller answers 503 and retries.
  if (isInternal(err) && isDependencyUnavailable(err))
    err = new OverloadedError("Service temporarily unavailable", { cause: err });
  if (isInternal(err)) return { code: "INTERNAL", message: INTERNAL_MESSAGE };
  const appError = err as AppError;
  const details = appError.details && Object.keys(appError.details).length > 0 ? appError.details : undefined;
  return { code: appError.code, message: appError.message, details };
}

/** The status (with trailers) a server answers for an error thrown by its implementation. */
export function errorToStatus(err: unknown): Pick<StatusObject, "code" | "details" | "metadata"> {
  const wire = wireErrorOf(err);
  const metadata = new Metadata();
  metadata.set(ERROR_CODE_KEY, wire.code);
  if (wire.details) metadata.set(ERROR_DETAILS_KEY, asciiJson(wire.details));
  return { code: STATUS_OF[wire.code], details: wire.message, metadata };
}

/** The item error of a batch outcome (SubmitTasks): the same code, message and details as a status. */
export function errorToItemError(err: unknown): { code: string; message: string; details_json: string } {
  const wire = wireErrorOf(err);
  return { code: wire.code, message: wire.message, details_json: wire.details ? JSON.stringify(wire.details) : "" };
}

/** The AppError a client throws for a failed item of a batch: what statusToError makes of the same error. */
export function itemErrorToError(item: { code: string; message: string; details_json: string }): AppError {
  const cause = new Error(`orchestrator: ${item.code}: ${item.message}`);
  if (!ERROR_CODES.has(item.code)) return internal(cause);
  return fromAppErrorCode(item.code as ErrorCode, item.message, parseDetails(item.details_json), cause);
}

function firstString(metadata: Metadata | undefined, key: string): string | undefined {
  const value = metadata?.get(key)[0];
  return typeof value === "string" ? value : undefined;
}

function detailsOf(metadata: Metadata | undefined): Record<string, unknown> | undefined {
  return parseDetails(firstString(metadata, ERROR_DETAILS_KEY));
}

function parseDetails(raw: string | undefined): Record<string, unknown> | undefined {
  if (!raw) return undefined;
  try {
    const parsed: unknown = JSON.parse(raw);
    return typeof parsed === "object" && parsed !== null && !Array.isArray(parsed)
      ? (parsed as Record<string, unknown>)
      : undefined;
  } catch {
    return undefined;
  }
}

function internal(cause: unknown): AppError {
  return new AppError("INTERNAL", INTERNAL_HTTP_MESSAGE, { cause });
}

/** Rebuilds the AppError the server threw, from its code, message and details. */
function fromAppErrorCode(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> | undefined,
  cause: unknown,
) {
  const options = { cause, ...(details ? { details } : {}) };
  switch (code) {
    case "VALIDATION":
      return new ValidationError(message, options);
    case "UNAUTHORIZED":
      return new UnauthorizedError(options);
    case "FORBIDDEN":
      return new ForbiddenError(message, options);
    case "NOT_FOUND":
      return new NotFoundError(message, options);
    case "CONFLICT":
      return new ConflictError(message, options);
    case "PAYLOAD_TOO_LARGE":
      return new PayloadTooLargeError(message, options);
    case "RATE_LIMITED": {
      const { retry_after: retryAfter, ...rest } = details ?? {};
      return new RateLimitedError(typeof retryAfter === "number" ? retryAfter : 1, { cause, details: rest });
    }
    case "UPSTREAM_UNAVAILABLE":
      return new UpstreamUnavailableError(message, options);
    case "OVERLOADED":
      return new OverloadedError(message, options);
    case "CONFIG":
    case "INTERNAL":
      return internal(cause);
  }
}

/** The AppError a client throws for a failed call. */
export function statusToError(err: ServiceError): AppError {
  const code = firstString(err.metadata, ERROR_CODE_KEY);
  if (code !== undefined && ERROR_CODES.has(code)) {
    return fromAppErrorCode(code as ErrorCode, err.details, detailsOf(err.metadata), err);
  }
  switch (err.code) {
    case status.UNAVAILABLE:
    // The client never cancels its own calls: CANCELLED means the server dropped the call
    // (a forced shutdown during a deploy), which is the orchestrator going away.
    case status.CANCELLED:
      return new UpstreamUnavailableError("Orchestrator unavailable", { cause: err });
    case status.DEADLINE_EXCEEDED:
      // Reachable but not answering in time: the orchestrator (or its database) is saturated.
      // 503 + Retry-After like any other shed request, so the client backs off and retries
      // (docs/reliability.md "Overload"), rather than a 502 it may not retry.
      return new OverloadedError("Orchestrator did not answer in time", { cause: err });
    case status.RESOURCE_EXHAUSTED:
      return new OverloadedError("System overloaded", { cause: err });
    case status.INVALID_ARGUMENT:
      return new ValidationError(err.details, { cause: err });
    case status.NOT_FOUND:
      return new NotFoundError(err.details, { cause: err });
    case status.PERMISSION_DENIED:
      return new ForbiddenError(err.details, { cause: err });
    case status.FAILED_PRECONDITION:
    case status.ALREADY_EXISTS:
    case status.ABORTED:
      return new ConflictError(err.details, { cause: err });
    case status.UNAUTHENTICATED:
      return new UnauthorizedError({ cause: err });
    default:
      return internal(err);
  }
}
