import { execFile, execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";

// scripts/check-node.cjs guards `npm ci`, `npm start` and `npm test` (package.json) on a Node
// that cannot run .ts files directly.
const run = promisify(execFile);
const root = path.resolve(import.meta.dirname, "../..");
const script = path.join(root, "scripts/check-node.cjs");
const { verdict } = createRequire(import.meta.url)(script) as { verdict: (v: string) => string | undefined };

describe("node version guard", () => {
  it("refuses every Node below 22.18 with one line that says what to run", () => {
    for (const v of ["18.19.0", "20.20.2", "22.12.0", "22.17.1", "v21.7.3"]) {
      const message = verdict(v);
      expect(message, v).toBeDefined();
      expect(message).not.toContain("\n");
      expect(message).toContain(v);
      expect(message).toContain(">= 22.18");
      expect(message).toContain("source scripts/ensure-node.sh");
    }
  });

  it("accepts 22.18 and later", () => {
    for (const v of ["22.18.0", "22.20.1", "23.0.0", "24.21.0", "25.1.0"]) expect(verdict(v), v).toBeUndefined();
  });

  it("matches package.json engines", async () => {
    const pkg = (await import(path.join(root, "package.json"), { with: { type: "json" } })).default as {
      engines: { node: string };
      scripts: Record<string, string>;
    };
    expect(pkg.engines.node).toBe(">=22.18");
    for (const name of ["preinstall", "postinstall", "start", "test"])
      expect(pkg.scripts[name], name).toMatch(/^node scripts\/check-node\.cjs/);
  });

  it("exits 0 silently on this Node", async () => {
    const { stdout, stderr } = await run(process.execPath, [script]);
    expect(stdout + stderr).toBe("");
  });

  // The machine's own Node, when it is an old one (Debian's system Node 20 here): the real thing.
  const system = "/usr/bin/node";
  const systemVersion = existsSync(system) ? verdictOf(system) : undefined;
  it.runIf(systemVersion !== undefined)("stops an old system Node with exit code 1 and one line", async () => {
    const failed = await run(system, [script]).then(
      () => undefined,
      (err: { code: number; stderr: string }) => err,
    );
    expect(failed?.code).toBe(1);
    expect(failed?.stderr.trim().split("\n")).toHaveLength(1);
    expect(failed?.stderr).toContain("is too old for this project");
  });
});

function verdictOf(node: string): string | undefined {
  try {
    const v = execFileSync(node, ["-p", "process.versions.node"]).toString().trim();
    return verdict(v);
  } catch {
    return undefined;
  }
}
