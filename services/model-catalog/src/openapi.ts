import express, { type Router } from "express";
import { z } from "zod";
import { MODEL_TIERS } from "@tog/catalog";
import { ApiDocs } from "@tog/edge";

// The model catalog's own OpenAPI document: an internal service on its own port,
// so it is not part of the gateway's public document. Served at GET /openapi.json.

const ModelRecordSchema = z
  .object({
    id: z.string().openapi({ description: "Canonical model identifier.", example: "gpt-4o-mini" }),
    name: z.string().openapi({ description: "Same as id." }),
    tier: z.enum(MODEL_TIERS),
    context_window: z.number().int().openapi({ description: "Maximum context length in tokens." }),
    cost_per_1k_prompt_tokens: z.number().openapi({ description: "USD per 1K input tokens." }),
    cost_per_1k_completion_tokens: z.number().openapi({ description: "USD per 1K output tokens." }),
    supports_tools: z.boolean(),
    supports_streaming: z.boolean(),
    available: z.boolean().openapi({ description: "Currently usable (the provider's key is configured)." }),
  })
  .openapi("ModelRecord");

const CatalogSchema = z.record(z.string(), z.array(ModelRecordSchema)).openapi("ModelCatalog", {
  description: "Provider name → its models; a provider without a configured key has an empty array.",
});

export function modelCatalogDocs(version: string): ApiDocs {
  const docs = new ApiDocs({
    title: "Task Orchestration Gateway model catalog",
    version,
    description:
      "Internal model service: the static model catalog, tiers and prices. No authentication; keep it on the internal network.",
    license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    servers: [{ url: "/", description: "The model catalog service (default port 8090)." }],
    tags: [
      { name: "Models", description: "The model catalog." },
      { name: "Health", description: "Probe and this document." },
    ],
  });
  // Documentation only: the routes are served by models.routes.ts and health.routes.ts.
  const unused: Router = express.Router();
  docs.route(
    unused,
    {
      method: "get",
      path: "/providers/models",
      summary: "List models by provider",
      tags: ["Models"],
      operationId: "listProviderModels",
      auth: "none",
      query: z.object({
        tier: z
          .enum(MODEL_TIERS)
          .optional()
          .openapi({ description: "Only models of this tier; empty or absent = all." }),
      }),
      responses: { 200: { description: "The catalog, by provider.", schema: CatalogSchema } },
    },
    () => undefined,
  );
  docs.route(
    unused,
    {
      method: "get",
      path: "/health",
      summary: "Liveness probe",
      tags: ["Health"],
      operationId: "getHealth",
      auth: "none",
      responses: { 200: { description: "The catalog is loaded.", schema: z.object({ status: z.literal("ok") }) } },
    },
    () => undefined,
  );
  docs.route(
    unused,
    {
      method: "get",
      path: "/openapi.json",
      summary: "This OpenAPI 3.0 document",
      tags: ["Health"],
      operationId: "getOpenApi",
      auth: "none",
      responses: { 200: { description: "OpenAPI 3.0 document.", schema: z.record(z.string(), z.unknown()) } },
    },
    () => undefined,
  );
  return docs;
}

/** GET /openapi.json of the model catalog. */
export function createOpenApiRouter(docs: ApiDocs): Router {
  const router = express.Router();
  router.get("/openapi.json", docs.handler());
  return router;
}
