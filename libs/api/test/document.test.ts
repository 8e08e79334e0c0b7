import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { PUBLIC_ROUTES, publicApiDocument } from "../src/index.ts";

type Operations = Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>>;

const operationsOf = (paths: Operations) =>
  Object.entries(paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));

describe("the public OpenAPI document", () => {
  it("is a valid OpenAPI 3.0 document built from the route definitions alone", async () => {
    const doc = publicApiDocument();
    await SwaggerParser.validate(structuredClone(doc) as never);
    const ops = operationsOf(doc.paths as Operations);
    expect(ops).toHaveLength(PUBLIC_ROUTES.length);
    const ids = PUBLIC_ROUTES.map((r) => r.operationId);
    expect(new Set(ids).size).toBe(ids.length);
  });

  it("describes the six session operations", () => {
    const paths = publicApiDocument().paths as Operations;
    const sessionOps = operationsOf(paths).filter((op) => op.includes("/api/v1/sessions"));
    expect(sessionOps.sort()).toEqual(
      [
        "GET /api/v1/sessions",
        "GET /api/v1/sessions/{sessionId}",
        "GET /api/v1/sessions/{sessionId}/history",
        "GET /api/v1/sessions/{sessionId}/events",
        "PATCH /api/v1/sessions/{sessionId}",
        "DELETE /api/v1/sessions/{sessionId}",
      ].sort(),
    );
    expect(Object.keys(paths["/api/v1/sessions/{sessionId}"]!.delete!.responses).sort()).toEqual([
      "204",
      "400",
      "401",
      "403",
      "404",
      "429",
    ]);
    expect(Object.keys(paths["/api/v1/sessions/{sessionId}/events"]!.get!.responses)).not.toContain("403");
  });

  it("lists the streaming routes with the event schemas they refer to", () => {
    const doc = publicApiDocument() as unknown as {
      paths: Operations;
      components: { schemas: Record<string, unknown> };
    };
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/v1/stream/sse", "/api/v1/stream/ws"]));
    expect(doc.components.schemas).toHaveProperty("StreamEvent");
  });
});
