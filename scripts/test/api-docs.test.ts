import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { publicApiDocument } from "@tog/api";
import { API_DOC_PATH, renderApiReference, spliceApiDoc } from "../api-docs.ts";

describe("docs/api.md", () => {
  it("its reference is the OpenAPI document's (run `node scripts/api-docs.ts --write` after changing a route)", async () => {
    const doc = await readFile(API_DOC_PATH, "utf8");
    expect(spliceApiDoc(doc, renderApiReference())).toBe(doc);
  });

  it("has a section for every operation and every schema of the document", async () => {
    const doc = await readFile(API_DOC_PATH, "utf8");
    const api = publicApiDocument() as unknown as {
      paths: Record<string, Record<string, { operationId: string }>>;
      components: { schemas: Record<string, unknown> };
    };
    for (const item of Object.values(api.paths)) {
      for (const op of Object.values(item))
        expect(doc, op.operationId).toContain(`<a id="op-${op.operationId.toLowerCase()}"></a>`);
    }
    for (const name of Object.keys(api.components.schemas).filter((n) => !n.startsWith("Event_"))) {
      expect(doc, name).toContain(`<a id="schema-${name.toLowerCase()}"></a>`);
    }
  });

  it("has the rule sections that code comments point at", async () => {
    const doc = await readFile(API_DOC_PATH, "utf8");
    for (const title of [
      "Requests",
      "Authentication",
      "Errors",
      "Rate limits",
      "Idempotency",
      "Statuses and modes",
      "Submitting a task",
      "Sessions",
      "Events and streams",
      "Health",
      "Limits",
    ]) {
      expect(doc, title).toMatch(new RegExp(`^##+ ${title}$`, "m"));
    }
  });
});
