// Who is calling. Set on `req.principal` by the auth middleware before any route runs.

export type AuthMethod = "api_key" | "bearer_token" | "anonymous";

export interface Principal {
  userId: string;
  /** The API key used, when the caller authenticated with one. Rate limits key on it. */
  apiKeyId?: string;
  via: AuthMethod;
}

/** The user every request acts as when GATEWAY_SKIP_AUTH=1 (documented in README). */
export const DEFAULT_USER_ID = "00000000-0000-4000-8000-000000000001";
export const DEFAULT_USER_NAME = "default";

declare global {
  // eslint-disable-next-line @typescript-eslint/no-namespace
  namespace Express {
    interface Request {
      principal?: Principal;
      /** Trace id of this request (from a valid traceparent, or new). */
      traceId?: string;
      /**
       * Set by the idempotency middleware for a request with an Idempotency-Key: its identity
       * (sha256 hex) and replay TTL, for handlers that also deduplicate durably (task submit).
       */
      idempotency?: { keyHash: string; ttlSeconds: number };
    }
  }
}
