import express from "express";
import type { ApiDocs, Auth, RateLimits } from "@tog/edge";
import { createSessionDocs } from "./app.ts";
import { registerSessionRoutes } from "./sessions/session.routes.ts";

/**
 * The session routes' part of the public OpenAPI document, built without a database: the
 * gateway passes it as `include` to its ApiDocs, so GET /api/v1/openapi.json lists all routes.
 */
export function sessionOpenApiRegistry(): ApiDocs["registry"] {
  const docs = createSessionDocs();
  const never = (): never => {
    throw new Error("documentation only");
  };
  const auth: Auth = { skipAuth: false, require: () => (_req, _res, next) => next(), authenticate: never };
  const limits: RateLimits = { middleware: () => (_req, _res, next) => next(), forRoute: () => () => Promise.resolve(undefined) };
  registerSessionRoutes({ router: express.Router(), docs, auth, limits, service: never, retentionDays: 30 });
  return docs.registry;
}
