import type { Express } from "express";
import type { Logger } from "@tog/core";
import type { Metrics } from "@tog/ops";
import type { Catalog } from "@tog/catalog";
import { createHttpApp } from "@tog/edge";
import { createHealthRouter } from "./health.routes.ts";
import { createModelsRouter } from "./models.routes.ts";
import { createOpenApiRouter, modelCatalogDocs } from "./openapi.ts";

export interface ModelCatalogAppOptions {
  logger: Logger;
  catalog: Catalog;
  configuredProviders: ReadonlySet<string>;
  nodeEnv: "development" | "production" | "test";
  metrics?: Metrics | undefined;
}

/** Version of the model catalog API (its OpenAPI document). */
export const MODEL_CATALOG_VERSION = "0.1.0";

// Only GET routes: a tiny body limit is enough.
const MAX_BODY_BYTES = 16 * 1024;

/** Internal service, no authentication; in production no browser origin is allowed. */
export function createModelCatalogApp(options: ModelCatalogAppOptions): Express {
  return createHttpApp({
    logger: options.logger,
    metrics: options.metrics,
    maxBodyBytes: MAX_BODY_BYTES,
    cors: { mode: options.nodeEnv === "production" ? "production" : "development", allowedOrigins: [] },
    routes: (app) => {
      app.use(createHealthRouter());
      app.use(createModelsRouter({ catalog: options.catalog, configuredProviders: options.configuredProviders }));
      app.use(createOpenApiRouter(modelCatalogDocs(MODEL_CATALOG_VERSION)));
    },
  });
}
