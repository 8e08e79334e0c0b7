// Typed errors. Every non-2xx answer becomes an ApiError subclass carrying the HTTP status and
// the server's message (`error` of the one error body, docs/api.md "Errors").

export class TogError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = new.target.name;
  }
}

/** The server answered with a non-2xx status. */
export class ApiError extends TogError {
  readonly status: number;
  /** The parsed JSON body (the `{error}` body, or the cancel 409 body), when there was one. */
  readonly body: unknown;
  /** Seconds from Retry-After, when the server sent it. */
  readonly retryAfter: number | undefined;
  readonly method: string;
  readonly url: string;

  constructor(init: {
    status: number;
    message: string;
    body: unknown;
    retryAfter?: number | undefined;
    method: string;
    url: string;
  }) {
    super(init.message);
    this.status = init.status;
    this.body = init.body;
    this.retryAfter = init.retryAfter;
    this.method = init.method;
    this.url = init.url;
  }
}

export class BadRequestError extends ApiError {}
export class UnauthorizedError extends ApiError {}
export class ForbiddenError extends ApiError {}
export class NotFoundError extends ApiError {}
/** 409: e.g. cancelling a task that is already terminal; `body.status` names the state. */
export class ConflictError extends ApiError {}
export class PayloadTooLargeError extends ApiError {}
export class RateLimitError extends ApiError {}
export class ServerError extends ApiError {}
export class BadGatewayError extends ServerError {}
export class ServiceUnavailableError extends ServerError {}

/** No HTTP answer at all (connection refused, reset, DNS). */
export class ConnectionError extends TogError {}

/** waitUntilDone gave up before the task reached a terminal state. */
export class WaitTimeoutError extends TogError {}

/** A stream could not be resumed within its reconnect budget. */
export class StreamError extends TogError {}

const BY_STATUS: Record<number, typeof ApiError> = {
  400: BadRequestError,
  401: UnauthorizedError,
  403: ForbiddenError,
  404: NotFoundError,
  409: ConflictError,
  413: PayloadTooLargeError,
  429: RateLimitError,
  502: BadGatewayError,
  503: ServiceUnavailableError,
};

export function apiErrorFor(init: ConstructorParameters<typeof ApiError>[0]): ApiError {
  const Cls = BY_STATUS[init.status] ?? (init.status >= 500 ? ServerError : ApiError);
  return new Cls(init);
}

/** The error an aborted operation rejects with (the signal's reason, as fetch does). */
export function abortError(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException("This operation was aborted", "AbortError");
}

export function isAbortError(err: unknown): boolean {
  return typeof err === "object" && err !== null && (err as { name?: unknown }).name === "AbortError";
}
