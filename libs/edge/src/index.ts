export * from "./principal.ts";
export { createErrorHandler, sendError, statusOf } from "./error-mapper.ts";
export { createHttpApp, type HttpAppOptions } from "./http-app.ts";
export { createRequestContext } from "./request-context.ts";
export { createCors, CORS_ALLOWED_HEADERS, CORS_EXPOSED_HEADERS, CORS_METHODS, type CorsSettings } from "./cors.ts";
export { startHttpServer, markStreaming, CONTRACT_TIMEOUTS, type ServerTimeouts, type StartedServer } from "./server.ts";
