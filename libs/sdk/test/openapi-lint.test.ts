// The public OpenAPI document and the model catalog's own document lint clean under Redocly's
// recommended rules (run offline with the @redocly/cli binary), and declare every header the
// system sends or reads.
import { execFile } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { modelCatalogDocs } from "@tog/model-catalog";
import { DOCUMENT_FILE, SDK_ROOT } from "../scripts/generate.ts";

const REDOCLY = path.resolve(SDK_ROOT, "../../node_modules/@redocly/cli/bin/cli.js");
const tmp = mkdtempSync(path.join(os.tmpdir(), "tog-lint-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

interface Problem {
  ruleId: string;
  severity: "error" | "warn";
  message: string;
}

function lint(file: string): Promise<Problem[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      [REDOCLY, "lint", file, "--format=json"],
      { cwd: tmp, env: { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" }, timeout: 60_000 },
      (_err, stdout) => {
        try {
          resolve((JSON.parse(stdout) as { problems: Problem[] }).problems);
        } catch (e) {
          reject(new Error(`redocly printed no JSON: ${stdout}\n${String(e)}`));
        }
      },
    );
  });
}

// Warnings we accept, each for a reason: probes answer 200/503 and have no 4xx; the WebSocket
// route's success is 101 (not 2xx); the catalog document has no authenticated route.
const ACCEPTED_WARNINGS = new Set(["operation-4xx-response", "operation-2xx-response", "no-unused-components"]);

describe("Redocly lint (recommended rules)", () => {
  it("the public document has no errors", async () => {
    const problems = await lint(DOCUMENT_FILE);
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(problems.filter((p) => !ACCEPTED_WARNINGS.has(p.ruleId))).toEqual([]);
  }, 90_000);

  it("the model catalog's own document has no errors", async () => {
    const file = path.join(tmp, "model-catalog.json");
    writeFileSync(file, modelCatalogDocs("0.1.0").json());
    const problems = await lint(file);
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(problems.filter((p) => !ACCEPTED_WARNINGS.has(p.ruleId))).toEqual([]);
  }, 90_000);
});

describe("headers and events in the public document", () => {
  type Param = { name: string; in: string };
  type Op = { parameters?: Param[]; responses: Record<string, { headers?: Record<string, unknown>; content?: Record<string, { schema?: { $ref?: string } }> }> };
  const doc = JSON.parse(readFileSync(DOCUMENT_FILE, "utf8")) as { paths: Record<string, Record<string, Op>>; servers?: unknown[]; tags?: { name: string }[] };
  const ops = Object.entries(doc.paths).flatMap(([p, methods]) => Object.entries(methods).map(([m, op]) => ({ id: `${m.toUpperCase()} ${p}`, op })));

  it("declares traceparent and tracestate on every operation", () => {
    for (const { id, op } of ops) {
      const headers = (op.parameters ?? []).filter((x) => x.in === "header").map((x) => x.name);
      expect(headers, id).toEqual(expect.arrayContaining(["traceparent", "tracestate"]));
    }
  });

  it("declares Idempotency-Key and the replay headers on both submit routes, Last-Event-ID on SSE", () => {
    for (const id of ["POST /api/v1/tasks", "POST /api/v1/tasks/stream"]) {
      const op = ops.find((o) => o.id === id)!.op;
      expect(op.parameters!.map((x) => x.name), id).toContain("Idempotency-Key");
      const ok = Object.entries(op.responses).find(([s]) => s.startsWith("2"))![1];
      expect(Object.keys(ok.headers ?? {}), id).toEqual(expect.arrayContaining(["X-Idempotency-Cached", "X-Idempotency-Key"]));
    }
    const sse = ops.find((o) => o.id === "GET /api/v1/stream/sse")!.op;
    expect(sse.parameters!.filter((x) => x.in === "header").map((x) => x.name)).toContain("Last-Event-ID");
    expect(sse.responses["200"]!.content!["text/event-stream"]!.schema).toEqual({ $ref: "#/components/schemas/StreamEvent" });
  });

  it("has servers, lists every tag it uses, and serves the probes at the root too", () => {
    expect(doc.servers?.length).toBeGreaterThan(0);
    const used = new Set(ops.flatMap(({ op }) => (op as { tags?: string[] }).tags ?? []));
    expect(new Set(doc.tags!.map((t) => t.name))).toEqual(used);
    expect(ops.map((o) => o.id)).toEqual(expect.arrayContaining(["GET /health", "GET /readiness"]));
  });
});
