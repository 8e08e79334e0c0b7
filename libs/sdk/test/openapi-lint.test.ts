// The public OpenAPI document lints clean under Redocly's recommended rules (run offline with
// the @redocly/cli binary), and declares every header the system sends or reads. The model
// catalog's own document is linted with its service (services/model-catalog/test).
import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { ACCEPTED_LINT_WARNINGS, lintOpenApi } from "@tog/testkit";
import { DOCUMENT_FILE } from "../scripts/generate.ts";

describe("Redocly lint (recommended rules)", () => {
  it("the public document has no errors", async () => {
    const problems = await lintOpenApi(DOCUMENT_FILE);
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(problems.filter((p) => !ACCEPTED_LINT_WARNINGS.has(p.ruleId))).toEqual([]);
  }, 90_000);
});

describe("headers and events in the public document", () => {
  type Param = { name: string; in: string };
  type Op = {
    parameters?: Param[];
    responses: Record<
      string,
      { headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string } }> }
    >;
  };
  const doc = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8")) as {
    paths: Record<string, Record<string, Op>>;
    servers?: unknown[];
    tags?: { name: string }[];
  };
  const ops = Object.entries(doc.paths).flatMap(([p, methods]) =>
    Object.entries(methods).map(([m, op]) => ({ id: `${m.toUpperCase()} ${p}`, op })),
  );

  it("declares traceparent and tracestate on every operation", () => {
    for (const { id, op } of ops) {
      const headers = (op.parameters ?? []).filter((x) => x.in === "header").map((x) => x.name);
      expect(headers, id).toEqual(expect.arrayContaining(["traceparent", "tracestate"]));
    }
  });

  it("declares Idempotency-Key and the replay headers on both submit routes, Last-Event-ID on SSE", () => {
    for (const id of ["POST /api/v1/tasks", "POST /api/v1/tasks/stream"]) {
      const op = ops.find((o) => o.id === id)!.op;
      expect(
        op.parameters!.map((x) => x.name),
        id,
      ).toContain("Idempotency-Key");
      const ok = Object.entries(op.responses).find(([s]) => s.startsWith("2"))![1];
      expect(Object.keys(ok.headers ?? {}), id).toEqual(
        expect.arrayContaining(["X-Idempotency-Cached", "X-Idempotency-Key"]),
      );
    }
    const sse = ops.find((o) => o.id === "GET /api/v1/stream/sse")!.op;
    expect(sse.parameters!.filter((x) => x.in === "header").map((x) => x.name)).toContain("Last-Event-ID");
    expect(sse.responses["200"]!.content!["text/event-stream"]!.schema).toEqual({
      $ref: "#/components/schemas/StreamEvent",
    });
  });

  it("has servers, lists every tag it uses, and serves the probes at the root too", () => {
    expect(doc.servers?.length).toBeGreaterThan(0);
    const used = new Set(ops.flatMap(({ op }) => (op as { tags?: string[] }).tags ?? []));
    expect(new Set(doc.tags!.map((t) => t.name))).toEqual(used);
    expect(ops.map((o) => o.id)).toEqual(expect.arrayContaining(["GET /health", "GET /readiness"]));
  });
});
