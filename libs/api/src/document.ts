import { ApiDocs, type OpenApiDocument } from "@tog/edge";
import { eventOpenApiSchemas } from "@tog/events";
import pkg from "../package.json" with { type: "json" };
import { HEALTH_ROUTES } from "./health.routes.ts";
import { SESSION_ROUTES } from "./sessions/session.routes.ts";
import { STREAM_ROUTES } from "./stream/stream.routes.ts";
import { TASK_ROUTES } from "./tasks/task.routes.ts";
import { createAccessTokenRoute } from "./token.routes.ts";

// The public OpenAPI document, built from the route definitions alone: no service, connection
// or handler is needed, so the gateway serves it, the SDK's types are generated from it
// (libs/sdk/scripts/generate.ts) and docs/api.md is checked against it, all from one source.

/** The API's version, as `info.version` of the document. */
export const API_VERSION: string = pkg.version;

/** Every tag the public document's operations use, in reading order. */
export const API_TAGS = [
  { name: "Tasks", description: "Submit, list, inspect and cancel tasks; their event history and timeline." },
  { name: "Approvals", description: "Human approval decisions for workflows waiting on an APPROVAL_REQUESTED." },
  {
    name: "Streaming",
    description: "Live events of a workflow over Server-Sent Events or WebSocket, resumable by id.",
  },
  { name: "Sessions", description: "Conversations: lists, metadata, history, turns, title, soft delete." },
  { name: "Auth", description: "Short-lived access tokens for the streaming routes." },
  { name: "Health", description: "Probes and this document (no authentication)." },
];

/** Every public route in the document's order: streams, sessions, then the gateway's own. */
export const PUBLIC_ROUTES = [
  ...STREAM_ROUTES,
  ...SESSION_ROUTES,
  ...HEALTH_ROUTES,
  createAccessTokenRoute,
  ...TASK_ROUTES,
];

/** Registers the per-type event schemas (`Event_<TYPE>`, `StreamEvent`) the streaming routes refer to. */
export function describeEventSchemas(docs: ApiDocs): void {
  for (const [name, schema] of Object.entries(eventOpenApiSchemas()))
    docs.registry.registerComponent("schemas", name, schema);
}

/** The document of every public route, under /api/v1 of one base URL. */
export function publicApiDocs(): ApiDocs {
  const docs = new ApiDocs({
    title: "Task Orchestration Gateway API",
    version: API_VERSION,
    description:
      "HTTP API of the Task Orchestration Gateway. Every endpoint lives under /api/v1; the probes are also served at the server root. Interactive documentation: /api/v1/docs.",
    license: { name: "Apache-2.0", url: "https://www.apache.org/licenses/LICENSE-2.0" },
    servers: [{ url: "/", description: "The server that serves this document (paths include /api/v1)." }],
    tags: API_TAGS,
  });
  describeEventSchemas(docs);
  for (const route of PUBLIC_ROUTES) docs.describe(route);
  return docs;
}

/** The public document as a plain object (what GET /api/v1/openapi.json serves). */
export function publicApiDocument(): OpenApiDocument {
  return publicApiDocs().document();
}
