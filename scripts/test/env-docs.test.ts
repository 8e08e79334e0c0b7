import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import { README_PATH, renderEnvDocs, spliceReadme } from "../env-docs.ts";

describe("README environment tables", () => {
  it("match the services' config schemas (run `node scripts/env-docs.ts --write` after changing a variable)", async () => {
    const readme = await readFile(README_PATH, "utf8");
    expect(spliceReadme(readme, renderEnvDocs())).toBe(readme);
  });

  it("document every variable with a description", () => {
    const rows = renderEnvDocs()
      .split("\n")
      .filter((l) => l.startsWith("| `"));
    expect(rows.length).toBeGreaterThan(20);
    for (const row of rows) expect(row, row).not.toMatch(/\|\s*\|$/);
  });
});
