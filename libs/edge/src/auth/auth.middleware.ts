import type { Request, RequestHandler } from "express";
import { UnauthorizedError, type Logger } from "@tog/core";
import { DEFAULT_USER_ID, type Principal } from "../principal.ts";
import { hashApiKey, isApiKeyFormat } from "./api-key.ts";
import type { ApiKeyRepository } from "./api-key.repository.ts";
import type { AccessTokens } from "./access-token.ts";

// Who may call a protected route (docs/api.md "Authentication"):
// - `X-API-Key: sk_<64 hex>` on every protected route.
// - `Authorization: Bearer <value>` only where the route allows it (the streaming routes):
//   a value starting with `sk_` is an API key, anything else must be a valid access token.
// - When both headers are sent, X-API-Key decides and Authorization is not looked at.
// - A credential in the query string is refused (401) even next to a valid header, and even
//   while authentication is off: URLs end up in logs and browser history.
// - Missing, malformed, unknown, disabled, revoked or expired → 401 {"error":"Unauthorized"}.
// - GATEWAY_SKIP_AUTH=1: no credential is needed and the request acts as DEFAULT_USER_ID
//   (via "anonymous"); a credential that verifies is still honoured, so several users can be
//   told apart in development; one that does not verify is ignored.

export interface AuthOptions {
  repository: Pick<ApiKeyRepository, "findActiveByHash" | "touchLastUsed">;
  tokens: Pick<AccessTokens, "verify">;
  skipAuth: boolean;
  logger?: Logger;
}

export interface RequireAuthOptions {
  /** Accept `Authorization: Bearer` (docs/api.md "Authentication": the streaming routes and POST /tasks/stream). */
  allowBearer?: boolean;
}

export interface Auth {
  readonly skipAuth: boolean;
  /** Middleware that sets `req.principal` or fails with UnauthorizedError. */
  require(options?: RequireAuthOptions): RequestHandler;
  /** The principal for a request, without express (WebSocket upgrades). Throws UnauthorizedError. */
  authenticate(req: Pick<Request, "headers" | "url">, options?: RequireAuthOptions): Promise<Principal>;
}

/** Query parameters that look like a credential; compared case-insensitively. */
export const QUERY_CREDENTIAL_PARAMS = ["api_key", "apikey", "key", "token", "access_token", "x-api-key"] as const;
const QUERY_CREDENTIALS = new Set<string>(QUERY_CREDENTIAL_PARAMS);
const BEARER_RE = /^Bearer[ ]+([^ ]+)[ ]*$/i;

export const ANONYMOUS_PRINCIPAL: Readonly<Principal> = Object.freeze({ userId: DEFAULT_USER_ID, via: "anonymous" });

type Failure = "missing" | "malformed" | "unknown_key" | "bad_token" | "bearer_not_allowed";

export function createAuth(options: AuthOptions): Auth {
  const { repository, tokens, skipAuth, logger } = options;

  async function fromApiKey(value: string): Promise<Principal | Failure> {
    if (!isApiKeyFormat(value)) return "malformed";
    const key = await repository.findActiveByHash(hashApiKey(value));
    if (!key) return "unknown_key";
    repository.touchLastUsed(key.id);
    return { userId: key.userId, apiKeyId: key.id, via: "api_key" };
  }

  async function resolve(req: Pick<Request, "headers">, allowBearer: boolean): Promise<Principal | Failure> {
    const apiKey = req.headers["x-api-key"];
    if (apiKey !== undefined) return fromApiKey(Array.isArray(apiKey) ? apiKey.join(",") : apiKey);
    const authorization = req.headers.authorization;
    if (authorization === undefined) return "missing";
    if (!allowBearer) return "bearer_not_allowed";
    const m = BEARER_RE.exec(authorization);
    if (!m) return "malformed";
    const value = m[1]!;
    if (value.startsWith("sk_")) return fromApiKey(value);
    const verified = await tokens.verify(value);
    return verified ? { userId: verified.userId, via: "bearer_token" } : "bad_token";
  }

  async function authenticate(
    req: Pick<Request, "headers" | "url">,
    opts: RequireAuthOptions = {},
  ): Promise<Principal> {
    if (hasQueryCredential(req.url)) {
      logger?.debug({ reason: "query_credential" }, "request refused");
      throw new UnauthorizedError();
    }
    const result = await resolve(req, opts.allowBearer === true);
    if (typeof result === "object") return result;
    if (skipAuth) return { ...ANONYMOUS_PRINCIPAL };
    logger?.debug({ reason: result }, "request refused");
    throw new UnauthorizedError();
  }

  return {
    skipAuth,
    authenticate,
    require(opts: RequireAuthOptions = {}): RequestHandler {
      return (req, _res, next) => {
        authenticate(req, opts).then((principal) => {
          req.principal = principal;
          next();
        }, next);
      };
    },
  };
}

/** True when the URL's query names a credential parameter (the values are not looked at). */
export function hasQueryCredential(url: string): boolean {
  const q = url.indexOf("?");
  if (q < 0) return false;
  for (const name of new URLSearchParams(url.slice(q + 1)).keys()) {
    // `key[]=…` and `key[0]=…` are the same parameter to most query parsers.
    if (QUERY_CREDENTIALS.has(name.replace(/\[.*$/, "").toLowerCase())) return true;
  }
  return false;
}
