import { AppError } from "@tog/core";

export interface ProviderErrorOptions {
  provider: string;
  model: string;
  /** HTTP status of the provider's response, when there was one. */
  status?: number | undefined;
  /** Whether the same call may succeed when repeated (429, 5xx, network, timeouts). */
  retryable: boolean;
  /** The provider's Retry-After, in milliseconds. */
  retryAfterMs?: number | undefined;
  cause?: unknown;
}

/** One failed call to one provider. The router retries or falls back on these. */
export class ProviderError extends AppError {
  readonly provider: string;
  readonly model: string;
  readonly status: number | undefined;
  readonly retryable: boolean;
  readonly retryAfterMs: number | undefined;

  constructor(message: string, options: ProviderErrorOptions) {
    super(options.retryable ? "UPSTREAM_UNAVAILABLE" : "INTERNAL", message, { cause: options.cause });
    this.provider = options.provider;
    this.model = options.model;
    this.status = options.status;
    this.retryable = options.retryable;
    this.retryAfterMs = options.retryAfterMs;
  }
}

/** HTTP statuses worth repeating: timeouts, rate limits, server errors (529 = Anthropic overloaded). */
export function isRetryableStatus(status: number): boolean {
  return status === 408 || status === 409 || status === 425 || status === 429 || status >= 500;
}

export interface LlmAttempt {
  model: string;
  provider: string;
  status: number | undefined;
  error: string;
}

export interface LlmErrorOptions {
  retryCount: number;
  maxRetries: number;
  recoverable: boolean;
  attempts: LlmAttempt[];
  cause?: unknown;
}

/**
 * The router's final failure: every candidate model failed (or none was usable). The task
 * turns it into ERROR_OCCURRED with `error_type` LLM_ERROR, `recoverable` and `retry_count`.
 * Code UPSTREAM_UNAVAILABLE when the providers were down/overloaded (recoverable later),
 * INTERNAL when the request or configuration was refused (repeating will not help).
 */
export class LlmError extends AppError {
  readonly errorType = "LLM_ERROR";
  /** Calls made beyond the first (retries of one model plus fallbacks to others). */
  readonly retryCount: number;
  /** The per-model retry budget that was configured. */
  readonly maxRetries: number;
  readonly recoverable: boolean;
  readonly attempts: readonly LlmAttempt[];

  constructor(message: string, options: LlmErrorOptions) {
    super(options.recoverable ? "UPSTREAM_UNAVAILABLE" : "INTERNAL", message, { cause: options.cause });
    this.retryCount = options.retryCount;
    this.maxRetries = options.maxRetries;
    this.recoverable = options.recoverable;
    this.attempts = Object.freeze([...options.attempts]);
  }
}
