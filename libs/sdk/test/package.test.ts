// What `npm publish libs/sdk/dist/package` would ship works as plain JavaScript: installed into a
// node_modules of its own, it imports in Node with type stripping off, exposes the client, the
// errors and the OpenAPI document, and its code imports no Node built-in (the browser path).
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, symlinkSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { build, PACKAGE_DIR } from "../scripts/build.ts";

const REPO = path.resolve(import.meta.dirname, "../../..");
let tmp: string;

beforeAll(() => {
  build();
  tmp = mkdtempSync(path.join(os.tmpdir(), "tog-sdk-pack-"));
  mkdirSync(path.join(tmp, "node_modules", "@tog"), { recursive: true });
  cpSync(PACKAGE_DIR, path.join(tmp, "node_modules", "@tog", "sdk"), { recursive: true });
  symlinkSync(
    path.join(REPO, "node_modules", "eventsource-parser"),
    path.join(tmp, "node_modules", "eventsource-parser"),
  );
}, 120_000);
afterAll(() => {
  if (tmp) rmSync(tmp, { recursive: true, force: true });
});

describe("the built package", () => {
  it("has exports for the code, its types and the OpenAPI document", () => {
    const manifest = JSON.parse(readFileSync(path.join(PACKAGE_DIR, "package.json"), "utf8")) as {
      exports: Record<string, unknown>;
      private?: boolean;
      dependencies: Record<string, string>;
    };
    expect(manifest.private).toBeUndefined();
    expect(manifest.exports["."]).toEqual({ types: "./dist/index.d.ts", default: "./dist/index.js" });
    expect(Object.keys(manifest.dependencies)).toEqual(["eventsource-parser"]);
    expect(readdirSync(path.join(PACKAGE_DIR, "dist"))).toEqual(
      expect.arrayContaining(["index.js", "index.d.ts", "stream.js"]),
    );
  });

  it("imports as plain JavaScript in Node (no type stripping)", () => {
    const script = [
      'import { TogClient, NotFoundError, isTerminalEvent } from "@tog/sdk";',
      'import doc from "@tog/sdk/openapi.json" with { type: "json" };',
      'const c = new TogClient({ baseUrl: "http://127.0.0.1:1/api/v1" });',
      "console.log(JSON.stringify({ client: typeof c.tasks.submit, error: new NotFoundError({ status: 404, message: 'x', body: null, method: 'GET', url: 'u' }).status, terminal: isTerminalEvent({ type: 'WORKFLOW_COMPLETED' }), openapi: doc.openapi, root: c.transport.root }));",
    ].join("\n");
    const out = execFileSync(process.execPath, ["--no-experimental-strip-types", "--input-type=module", "-e", script], {
      cwd: tmp,
      encoding: "utf8",
    });
    expect(JSON.parse(out)).toEqual({
      client: "function",
      error: 404,
      terminal: true,
      openapi: "3.0.3",
      root: "http://127.0.0.1:1",
    });
  });

  it("imports no Node built-in anywhere in its code", () => {
    for (const file of readdirSync(path.join(PACKAGE_DIR, "dist"), { recursive: true, encoding: "utf8" }).filter((f) =>
      f.endsWith(".js"),
    )) {
      // comments (usage examples in JSDoc) do not count
      const code = readFileSync(path.join(PACKAGE_DIR, "dist", file), "utf8")
        .replace(/\/\*[\s\S]*?\*\//g, "")
        .replace(/^\s*\/\/.*$/gm, "");
      expect(code, file).not.toMatch(/from\s+["'](node:|fs|path|http|https|stream|crypto|os|child_process)["']/);
      expect(code, file).not.toMatch(/\bprocess\.(env|argv|exit)\b/);
    }
  });
});
