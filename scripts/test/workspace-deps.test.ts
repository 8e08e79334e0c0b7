import { readdirSync, readFileSync, statSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// The layering of docs/architecture.md "Libraries": a service depends on libs only, a lib never
// on a service, and another workspace is reached through its package name only (its `exports`:
// the public index.ts), never by a path into its files. Checked on what the code imports (any `@tog/<name>`
// specifier, static or
// dynamic, and any relative path into another workspace), not only on package.json, so a
// hoisted workspace link cannot hide a dependency.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

interface Workspace {
  dir: string;
  name: string;
  kind: "lib" | "service";
  deps: string[];
}

function workspaces(): Workspace[] {
  return (["libs", "services"] as const).flatMap((group) =>
    readdirSync(path.join(ROOT, group))
      .filter((d) => statSync(path.join(ROOT, group, d, "package.json"), { throwIfNoEntry: false })?.isFile())
      .map((d) => {
        const pkg = JSON.parse(readFileSync(path.join(ROOT, group, d, "package.json"), "utf8")) as {
          name: string;
          dependencies?: Record<string, string>;
          devDependencies?: Record<string, string>;
        };
        return {
          dir: path.join(group, d),
          name: pkg.name,
          kind: group === "libs" ? ("lib" as const) : ("service" as const),
          deps: Object.keys({ ...pkg.dependencies, ...pkg.devDependencies }),
        };
      }),
  );
}

const SKIP = new Set(["node_modules", "generated", "dist", "web"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.(ts|tsx|mts|js|mjs|cjs)$/.test(e.name) ? [rel] : [];
  });
}

const SPECIFIER = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["']([^"']+)["']/g;

/** Every module specifier a file imports. */
function importsOf(source: string): string[] {
  return [...source.matchAll(SPECIFIER)].map((m) => m[1]!);
}

/** The workspace (by directory) a specifier in `file` points at, when it names one. */
function targetOf(specifier: string, file: string, all: Workspace[]): Workspace | undefined {
  if (specifier.startsWith("@tog/")) {
    const name = specifier.split("/").slice(0, 2).join("/");
    return all.find((w) => w.name === name);
  }
  if (specifier.startsWith(".")) {
    const resolved = path.relative(ROOT, path.resolve(ROOT, path.dirname(file), specifier));
    return all.find((w) => resolved === w.dir || resolved.startsWith(`${w.dir}${path.sep}`));
  }
  return undefined;
}

function violations(all: Workspace[]): string[] {
  const found: string[] = [];
  for (const ws of all) {
    for (const dep of ws.deps) {
      const target = all.find((w) => w.name === dep);
      if (target?.kind === "service") found.push(`${ws.dir}/package.json depends on the service ${dep}`);
    }
    for (const file of sourceFiles(ws.dir)) {
      for (const specifier of importsOf(readFileSync(path.join(ROOT, file), "utf8"))) {
        const target = targetOf(specifier, file, all);
        if (!target || target === ws) continue;
        if (target.kind === "service") found.push(`${file} imports the service ${target.name} ("${specifier}")`);
        else if (specifier.startsWith("."))
          found.push(`${file} reaches into ${target.name} by path ("${specifier}"); import the package`);
      }
    }
  }
  return found;
}

describe("workspace layering", () => {
  const all = workspaces();

  it("finds the workspaces and their imports", () => {
    expect(all.filter((w) => w.kind === "service").map((w) => w.name)).toEqual(
      expect.arrayContaining(["@tog/gateway", "@tog/session", "@tog/stream"]),
    );
    expect(
      importsOf(
        'import { a } from "@tog/x";\nimport "./y.ts";\nconst m = await import("@tog/z");\nexport { b } from "../c.ts";',
      ),
    ).toEqual(["@tog/x", "./y.ts", "@tog/z", "../c.ts"]);
  });

  it("no service or lib imports or depends on a service (other than itself)", () => {
    expect(violations(all)).toEqual([]);
  });

  it("every lib exposes one explicit index: `exports` is that file, and it names what it exports", () => {
    for (const lib of all.filter((w) => w.kind === "lib")) {
      const pkg = JSON.parse(readFileSync(path.join(ROOT, lib.dir, "package.json"), "utf8")) as {
        exports?: Record<string, unknown>;
      };
      const main = pkg.exports?.["."];
      const entry = typeof main === "string" ? main : (main as { default?: string } | undefined)?.default;
      expect(entry, lib.name).toBe("./src/index.ts");
      const index = readFileSync(path.join(ROOT, lib.dir, "src/index.ts"), "utf8");
      expect(index, `${lib.dir}/src/index.ts uses export *`).not.toMatch(/^export \*/m);
    }
  });

  it("the check sees a service importing another one", () => {
    const fake: Workspace = { dir: "services/gateway", name: "@tog/gateway", kind: "service", deps: ["@tog/session"] };
    const others = all.filter((w) => w.name !== "@tog/gateway");
    expect(violations([fake, ...others]).filter((v) => v.startsWith("services/gateway/package.json"))).toEqual([
      "services/gateway/package.json depends on the service @tog/session",
    ]);
    const stream = all.find((w) => w.name === "@tog/stream")!;
    expect(targetOf("@tog/stream", "services/gateway/src/main.ts", all)).toBe(stream);
    expect(targetOf("../../stream/src/app.ts", "services/gateway/src/main.ts", all)).toBe(stream);
  });
});
