import { parseRetryAfter, sleep } from "./backoff.ts";
import { apiErrorFor, ConnectionError, isAbortError, type ApiError } from "./errors.ts";

// The HTTP core: one fetch per call with the credential and trace headers, JSON in and out,
// typed errors, and a bounded retry of 429/502/503 after Retry-After for calls that are safe
// to repeat (reads, and writes made idempotent by an Idempotency-Key). Browser-safe: fetch,
// URL, AbortSignal only.

export type FetchLike = (input: string, init: RequestInit) => Promise<Response>;

export interface TransportOptions {
  /** Server root (`http://localhost:8080`) or the API base (`http://localhost:8080/api/v1`). */
  baseUrl: string;
  /** Sent as X-API-Key. */
  apiKey?: string | undefined;
  /** Sent as `Authorization: Bearer` (streaming routes; also accepted elsewhere when auth is off). */
  token?: string | undefined;
  /** Extra headers on every request (e.g. traceparent). */
  headers?: Record<string, string> | undefined;
  fetch?: FetchLike | undefined;
  /** Retries of a 429/502/503 answer or a lost connection for safe calls (default 3). */
  maxRetries?: number | undefined;
  /** Longest Retry-After the client waits for before giving up, in seconds (default 60). */
  maxRetryAfterSeconds?: number | undefined;
}

export interface RequestOptions {
  signal?: AbortSignal | undefined;
  /** Extra headers for this call (traceparent, tracestate, Idempotency-Key…). */
  headers?: Record<string, string> | undefined;
}

export interface CallSpec {
  method: "GET" | "POST" | "PATCH" | "DELETE";
  /** Path below the server root, e.g. `/api/v1/tasks`. */
  path: string;
  query?: Record<string, string | number | boolean | undefined> | undefined;
  body?: unknown;
  /** Repeating the call cannot do anything twice: retried on 429/502/503 and lost connections. */
  safe: boolean;
  /** 2xx statuses plus these are returned instead of thrown (e.g. 409 of cancel). */
  accept?: number[];
}

export interface CallResult<T> {
  status: number;
  body: T;
  headers: Headers;
}

const RETRY_STATUSES = new Set([429, 502, 503]);

export class Transport {
  readonly root: string;
  readonly #options: TransportOptions;
  readonly #fetch: FetchLike;

  constructor(options: TransportOptions) {
    this.#options = options;
    this.root = options.baseUrl.replace(/\/+$/, "").replace(/\/api\/v1$/, "");
    const f = options.fetch ?? globalThis.fetch;
    if (typeof f !== "function") throw new TypeError("No fetch available: pass `fetch` in the client options");
    // Called unbound: a browser's fetch throws "Illegal invocation" when called as a method.
    this.#fetch = (input, init) => f(input, init);
  }

  url(path: string, query?: CallSpec["query"]): string {
    const u = new URL(this.root + path);
    for (const [k, v] of Object.entries(query ?? {})) if (v !== undefined) u.searchParams.set(k, String(v));
    return u.toString();
  }

  /** Credential and default headers. */
  headers(extra?: Record<string, string>): Record<string, string> {
    const h: Record<string, string> = { ...this.#options.headers };
    if (this.#options.apiKey) h["X-API-Key"] = this.#options.apiKey;
    if (this.#options.token) h.Authorization = `Bearer ${this.#options.token}`;
    return { ...h, ...extra };
  }

  /** Raw fetch with the client's headers; network failures become ConnectionError. */
  async fetch(url: string, init: RequestInit & { headers?: Record<string, string> }): Promise<Response> {
    try {
      return await this.#fetch(url, { ...init, headers: this.headers(init.headers) });
    } catch (err) {
      if (isAbortError(err) || init.signal?.aborted) throw err;
      throw new ConnectionError(`Cannot reach ${new URL(url).origin}: ${(err as Error).message}`, { cause: err });
    }
  }

  async call<T>(spec: CallSpec, options: RequestOptions = {}): Promise<CallResult<T>> {
    const url = this.url(spec.path, spec.query);
    const maxRetries = spec.safe ? (this.#options.maxRetries ?? 3) : 0;
    const maxWait = this.#options.maxRetryAfterSeconds ?? 60;
    for (let attempt = 0; ; attempt++) {
      const headers: Record<string, string> = { Accept: "application/json", ...options.headers };
      let body: string | undefined;
      if (spec.body !== undefined) {
        headers["Content-Type"] = "application/json";
        body = JSON.stringify(spec.body);
      }
      let res: Response;
      try {
        res = await this.fetch(url, { method: spec.method, headers, body, signal: options.signal });
      } catch (err) {
        if (err instanceof ConnectionError && attempt < maxRetries) {
          await sleep(Math.min(8_000, 250 * 2 ** attempt), options.signal);
          continue;
        }
        throw err;
      }
      if (res.ok || spec.accept?.includes(res.status)) {
        const text = res.status === 204 ? "" : await res.text();
        return { status: res.status, body: (text === "" ? undefined : JSON.parse(text)) as T, headers: res.headers };
      }
      const error = await toApiError(res, spec.method, url);
      const wait = error.retryAfter ?? Math.min(8, 0.25 * 2 ** attempt);
      if (RETRY_STATUSES.has(res.status) && attempt < maxRetries && wait <= maxWait) {
        await sleep(wait * 1000, options.signal);
        continue;
      }
      throw error;
    }
  }
}

/** Builds the typed error of a non-2xx response (reads the body). */
export async function toApiError(res: Response, method: string, url: string): Promise<ApiError> {
  const text = await res.text().catch(() => "");
  let body: unknown = text;
  let message = text.trim() === "" ? `HTTP ${res.status}` : text.slice(0, 500);
  try {
    body = JSON.parse(text);
    const e = (body as { error?: unknown; message?: unknown } | null) ?? {};
    if (typeof e.error === "string") message = e.error;
    else if (typeof e.message === "string") message = e.message;
  } catch {
    // not JSON: keep the text
  }
  const retryAfter =
    parseRetryAfter(res.headers.get("Retry-After")) ?? (body as { retry_after?: number } | null)?.retry_after;
  return apiErrorFor({ status: res.status, message, body, retryAfter, method, url });
}
