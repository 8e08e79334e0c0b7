import SwaggerParser from "@apidevtools/swagger-parser";
import { describe, expect, it } from "vitest";
import { ApiDocs } from "@tog/edge";
import { sessionOpenApiRegistry } from "../src/openapi.ts";

describe("OpenAPI", () => {
  it("describes the six session operations, also when included in another service's document", async () => {
    const docs = new ApiDocs({ title: "gateway", version: "0", include: [sessionOpenApiRegistry()] });
    const doc = docs.document() as unknown as { paths: Record<string, Record<string, { operationId: string; responses: Record<string, unknown> }>> };
    const ops = Object.entries(doc.paths).flatMap(([p, item]) => Object.keys(item).map((m) => `${m.toUpperCase()} ${p}`));
    expect(ops.sort()).toEqual(
      [
        "GET /api/v1/sessions",
        "GET /api/v1/sessions/{sessionId}",
        "GET /api/v1/sessions/{sessionId}/history",
        "GET /api/v1/sessions/{sessionId}/events",
        "PATCH /api/v1/sessions/{sessionId}",
        "DELETE /api/v1/sessions/{sessionId}",
      ].sort(),
    );
    expect(Object.keys(doc.paths["/api/v1/sessions/{sessionId}"]!.delete!.responses).sort()).toEqual(["204", "400", "401", "403", "404", "429"]);
    expect(Object.keys(doc.paths["/api/v1/sessions/{sessionId}/events"]!.get!.responses)).not.toContain("403");
    await SwaggerParser.validate(structuredClone(docs.document()) as never);
  });
});
