import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ACCEPTED_LINT_WARNINGS, lintOpenApi } from "@tog/testkit";
import { modelCatalogDocs } from "../src/openapi.ts";

// The model catalog's own document (not part of the public one) lints clean under Redocly's
// recommended rules, as the public document does (libs/sdk/test/openapi-lint.test.ts).

const tmp = mkdtempSync(path.join(os.tmpdir(), "tog-catalog-doc-"));
afterAll(() => rmSync(tmp, { recursive: true, force: true }));

describe("Redocly lint (recommended rules)", () => {
  it("the model catalog's own document has no errors", async () => {
    const file = path.join(tmp, "model-catalog.json");
    writeFileSync(file, modelCatalogDocs("0.1.0").json());
    const problems = await lintOpenApi(file);
    expect(problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(problems.filter((p) => !ACCEPTED_LINT_WARNINGS.has(p.ruleId))).toEqual([]);
  }, 90_000);
});
