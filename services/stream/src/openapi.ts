import express from "express";
import { ApiDocs, type Auth } from "@tog/edge";
import type { SseEndpoint } from "./sse/sse-endpoint.ts";
import type { StreamContext } from "./stream-context.ts";
import { registerStreamRoutes } from "./stream.routes.ts";
import { STREAM_VERSION } from "./version.ts";

/**
 * The stream routes' part of the public OpenAPI document, built without NATS or a database: the
 * gateway passes it as `include` to its ApiDocs, so GET /api/v1/openapi.json lists them too.
 */
export function streamOpenApiRegistry(): ApiDocs["registry"] {
  const docs = new ApiDocs({ title: "stream routes", version: STREAM_VERSION });
  // Registration builds the auth middleware and reads the route specs; handlers never run here.
  const passThrough: Auth["require"] = () => (_req, _res, next) => next();
  const ctx = { auth: { require: passThrough } } as unknown as StreamContext;
  registerStreamRoutes(express.Router(), docs, ctx, {} as SseEndpoint);
  return docs.registry;
}
