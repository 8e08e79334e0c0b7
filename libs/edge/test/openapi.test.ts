import { afterAll, beforeAll, describe, expect, it } from "vitest";
import express from "express";
import { z } from "zod";
import { createLogger } from "@tog/core";
import { ApiDocs, createHttpApp, startHttpServer, toExpressPath, type StartedServer } from "@tog/edge";

const logger = createLogger({ service: "openapi-test", level: "silent" });

const TaskParams = z.object({ id: z.string().min(1) });
const ListQuery = z.object({
  limit: z.coerce.number().int().min(1).max(200).default(50),
  offset: z.coerce.number().int().min(0).default(0),
});
const SubmitBody = z
  .object({
    query: z.string({ error: "Query is required" }).min(1, "Query is required"),
    session_id: z.string().optional(),
  })
  .openapi("SubmitTaskRequest");
const Submitted = z.object({ task_id: z.string(), status: z.string() }).openapi("TaskSubmitted");

let docs: ApiDocs;
let server: StartedServer;
let base: string;

beforeAll(async () => {
  docs = new ApiDocs({ title: "Test API", version: "9.9.9" });
  const router = express.Router();
  docs.route(
    router,
    {
      method: "post",
      path: "/api/v1/tasks",
      summary: "Submit",
      auth: "apiKey",
      rateLimited: true,
      idempotent: true,
      body: SubmitBody,
      responses: {
        201: { description: "Created", schema: Submitted, headers: { "X-Workflow-ID": { description: "Task id" } } },
      },
      invalidMessage: (part, err) => (part === "body" ? (err.issues[0]?.message ?? "bad") : `Invalid ${part}`),
    },
    (_req, res, input) => {
      res.status(201).json({ task_id: `t-${input.body.query}`, status: "QUEUED" });
    },
  );
  docs.route(
    router,
    {
      method: "get",
      path: "/api/v1/tasks/{id}/events",
      summary: "Events",
      auth: "apiKeyOrBearer",
      params: TaskParams,
      query: ListQuery,
      responses: {
        200: { description: "Events", schema: z.object({ id: z.string(), limit: z.number(), offset: z.number() }) },
      },
    },
    (_req, res, input) => {
      res.json({ id: input.params.id, limit: input.query.limit, offset: input.query.offset });
    },
  );
  router.get("/openapi.json", docs.handler());
  const app = createHttpApp({
    logger,
    maxBodyBytes: 10_000,
    cors: { mode: "development", allowedOrigins: [] },
    routes: (a) => a.use(router),
  });
  server = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  base = `http://127.0.0.1:${server.port}`;
});

afterAll(async () => server?.close());

describe("ApiDocs", () => {
  it("converts OpenAPI paths to express paths", () => {
    expect(toExpressPath("/api/v1/sessions/{sessionId}/events")).toBe("/api/v1/sessions/:sessionId/events");
  });

  it("validates requests with the registered schemas", async () => {
    const ok = await fetch(`${base}/api/v1/tasks/abc/events?limit=7`);
    expect(await ok.json()).toEqual({ id: "abc", limit: 7, offset: 0 });

    const badLimit = await fetch(`${base}/api/v1/tasks/abc/events?limit=500`);
    expect(badLimit.status).toBe(400);
    expect(await badLimit.json()).toEqual({ error: "Invalid limit parameter" });

    const badOffset = await fetch(`${base}/api/v1/tasks/abc/events?offset=x`);
    expect(await badOffset.json()).toEqual({ error: "Invalid offset parameter" });

    const post = (body: string) =>
      fetch(`${base}/api/v1/tasks`, { method: "POST", headers: { "Content-Type": "application/json" }, body });
    const created = await post(JSON.stringify({ query: "hi" }));
    expect(created.status).toBe(201);
    expect(await created.json()).toEqual({ task_id: "t-hi", status: "QUEUED" });

    const missing = await post(JSON.stringify({}));
    expect(missing.status).toBe(400);
    expect(await missing.json()).toEqual({ error: "Query is required" });
    const empty = await post(JSON.stringify({ query: "" }));
    expect(await empty.json()).toEqual({ error: "Query is required" });
  });

  it("documents routes, security, the error schema and rate-limit headers (OpenAPI 3.0)", async () => {
    const doc = (await (await fetch(`${base}/openapi.json`)).json()) as Record<string, any>;
    expect(doc.openapi).toMatch(/^3\.0\.\d+$/);
    expect(doc.info).toEqual({ title: "Test API", version: "9.9.9" });
    expect(doc.components.securitySchemes).toEqual({
      ApiKeyAuth: expect.objectContaining({ type: "apiKey", in: "header", name: "X-API-Key" }),
      bearerAuth: expect.objectContaining({ type: "http", scheme: "bearer" }),
    });
    expect(doc.components.schemas.Error).toEqual(
      expect.objectContaining({
        type: "object",
        required: ["error"],
        properties: expect.objectContaining({ error: { type: "string", example: "Unauthorized" } }),
      }),
    );
    const submit = doc.paths["/api/v1/tasks"].post;
    expect(submit.security).toEqual([{ ApiKeyAuth: [] }]);
    expect(submit.requestBody.content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/SubmitTaskRequest",
    });
    expect(Object.keys(submit.responses).sort()).toEqual(["201", "400", "401", "429"]);
    expect(Object.keys(submit.responses["201"].headers).sort()).toEqual(
      // an idempotent route's success also names the replay headers
      [
        "X-RateLimit-Limit",
        "X-RateLimit-Remaining",
        "X-RateLimit-Reset",
        "X-Workflow-ID",
        "X-Idempotency-Cached",
        "X-Idempotency-Key",
      ].sort(),
    );
    expect(submit.responses["201"].headers["X-Idempotency-Cached"]).toEqual({
      $ref: "#/components/headers/X-Idempotency-Cached",
    });
    expect(submit.responses["429"].headers["Retry-After"]).toEqual({ $ref: "#/components/headers/Retry-After" });
    expect(submit.responses["401"].content["application/json"].schema).toEqual({ $ref: "#/components/schemas/Error" });
    // every route declares the W3C trace context headers it reads
    expect(submit.parameters).toEqual([
      expect.objectContaining({ in: "header", name: "Idempotency-Key", required: false }),
      expect.objectContaining({ in: "header", name: "traceparent", required: false }),
      expect.objectContaining({ in: "header", name: "tracestate", required: false }),
    ]);

    const events = doc.paths["/api/v1/tasks/{id}/events"].get;
    expect(events.security).toEqual([{ ApiKeyAuth: [] }, { bearerAuth: [] }]);
    expect(events.parameters.map((p: { in: string; name: string }) => `${p.in}:${p.name}`).sort()).toEqual(
      ["path:id", "query:limit", "query:offset", "header:traceparent", "header:tracestate"].sort(),
    );
  });

  it("rebuilds the cached document when a route is added later", () => {
    const before = docs.document();
    docs.route(
      express.Router(),
      {
        method: "get",
        path: "/api/v1/late",
        summary: "Late",
        auth: "none",
        responses: { 204: { description: "Nothing" } },
      },
      () => undefined,
    );
    const after = docs.document();
    expect(before.paths["/api/v1/late"]).toBeUndefined();
    expect(after.paths["/api/v1/late"]?.get?.security).toEqual([]);
  });
});
