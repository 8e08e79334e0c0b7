export { type AuthMethod, DEFAULT_USER_ID, DEFAULT_USER_NAME, type Principal } from "./principal.ts";
export { createErrorHandler, sendError, statusOf } from "./error-mapper.ts";
export { createHttpApp, type HttpAppOptions } from "./http-app.ts";
export { createLoadShedder, type LoadShedder, type LoadShedderOptions, type ShedReason } from "./load-shedding.ts";
export { createRequestContext } from "./request-context.ts";
export { createCors, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_METHODS, type CorsSettings } from "./cors.ts";
export {
  startHttpServer,
  markStreaming,
  CONTRACT_TIMEOUTS,
  type ServerTimeouts,
  type StartedServer,
} from "./server.ts";
export {
  API_KEY_DISPLAY_PREFIX_LENGTH,
  API_KEY_PREFIX,
  apiKeyDisplayPrefix,
  generateApiKey,
  hashApiKey,
  isApiKeyFormat,
} from "./auth/api-key.ts";
export {
  type ActiveApiKey,
  type ApiKeyInfo,
  ApiKeyRepository,
  type ApiKeyRepositoryOptions,
} from "./auth/api-key.repository.ts";
export { UserRepository, type UserRepositoryOptions } from "./auth/user.repository.ts";
export {
  ACCESS_TOKEN_AUDIENCE,
  ACCESS_TOKEN_ISSUER,
  AccessTokens,
  type AccessTokensOptions,
  type IssuedToken,
} from "./auth/access-token.ts";
export {
  ANONYMOUS_PRINCIPAL,
  type Auth,
  type AuthOptions,
  createAuth,
  hasQueryCredential,
  QUERY_CREDENTIAL_PARAMS,
  type RequireAuthOptions,
} from "./auth/auth.middleware.ts";
export { assertAuthConfig, authConfigShape, PUBLISHED_TOKEN_SECRETS } from "./auth/auth.config.ts";
export {
  ApiDocs,
  type ApiDocsOptions,
  defaultInvalidMessage,
  defineRoute,
  errorResponse,
  ErrorResponseSchema,
  firstRuleMessage,
  IDEMPOTENCY_REPLAY_HEADERS,
  mountRoute,
  OPENAPI_VERSION,
  type OpenApiDocument,
  parseRequestPart,
  RATE_LIMIT_HEADERS,
  type RequestPart,
  type RouteAuth,
  type RouteDefinition,
  type RouteHandler,
  type RouteInput,
  type RouteResponse,
  type RouteSpec,
  SECURITY_SCHEME_API_KEY,
  SECURITY_SCHEME_BEARER,
  toExpressPath,
} from "./openapi.ts";
export { edgeConfigShape } from "./config.ts";
export {
  createApiRateLimiter,
  createRateLimiter,
  rateLimitHeaders,
  type RateDecision,
  type RateLimiterOptions,
  type RateLimits,
  type RateLimitSettings,
  type RouteLimitOptions,
} from "./rate-limit.ts";
export {
  createIdempotency,
  createIdempotencyIdentity,
  IDEMPOTENCY_KEY_MAX_LENGTH,
  idempotencyIdentity,
  type IdempotencyOptions,
} from "./idempotency.ts";
export { ensureLocalTokenSecret, LOCAL_TOKEN_SECRET_FILE, readLocalTokenSecret } from "./auth/local-secret.ts";
export { CONTENT_TYPE_MESSAGE, requireJsonBody } from "./require-json.ts";
export { NOSNIFF_NO_STORE } from "./security-headers.ts";
