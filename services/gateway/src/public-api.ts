import type { RequestHandler } from "express";
import { createLogger } from "@tog/core";
import type { AccessTokens, Auth, RateLimits } from "@tog/edge";
import type { OrchestratorClient } from "@tog/proto";
import { sessionOpenApiRegistry } from "@tog/session";
import { streamOpenApiRegistry } from "@tog/stream";
import { createGatewayApp } from "./app.ts";
import { taskRoutes } from "./tasks/task.routes.ts";
import { tokenRoutes } from "./token.routes.ts";
import { GATEWAY_VERSION } from "./version.ts";

/**
 * The public API's OpenAPI document (gateway, stream and session routes), built without any
 * connection: route registration only reads the route specs, handlers never run. Used by the
 * SDK's type generator and by the lint test (libs/sdk/scripts/generate.ts).
 */
export function publicApiDocument(): Record<string, unknown> {
  const pass: RequestHandler = (_req, _res, next) => next();
  const auth = { skipAuth: true, require: () => pass, authenticate: () => Promise.reject(new Error("not serving")) } as unknown as Auth;
  const limits: RateLimits = { middleware: () => pass, forRoute: () => () => Promise.resolve(undefined) };
  const { docs } = createGatewayApp({
    logger: createLogger({ service: "openapi", level: "silent" }),
    version: GATEWAY_VERSION,
    auth,
    limits,
    idempotency: pass,
    tokens: {} as AccessTokens,
    modules: [tokenRoutes, taskRoutes({ orchestrator: {} as OrchestratorClient })],
    docsInclude: [streamOpenApiRegistry(), sessionOpenApiRegistry()],
    cors: { mode: "development", allowedOrigins: [] },
    maxBodyBytes: 1024,
    readinessChecks: [],
    readinessTimeoutMs: 1,
  });
  return docs.document() as unknown as Record<string, unknown>;
}
