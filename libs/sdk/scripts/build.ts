// Builds the publishable package in libs/sdk/dist/package: the sources compiled to ES2024
// JavaScript with declarations (tsc, `.ts` import paths rewritten to `.js`), the OpenAPI
// document, the README, and a package.json whose exports point at the JavaScript. Inside this
// repository the workspace uses the TypeScript sources directly (Node strips the types), but
// Node does not strip types under node_modules, so what is published must be JavaScript.
//   node libs/sdk/scripts/build.ts && npm publish libs/sdk/dist/package
import { execFileSync } from "node:child_process";
import { cpSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";

const SDK_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const PACKAGE_DIR = path.join(SDK_ROOT, "dist", "package");

export function build(): string {
  rmSync(PACKAGE_DIR, { recursive: true, force: true });
  mkdirSync(PACKAGE_DIR, { recursive: true });
  const tsc = createRequire(import.meta.url).resolve("typescript/bin/tsc");
  execFileSync(process.execPath, [tsc, "-p", path.join(SDK_ROOT, "tsconfig.build.json")], { stdio: "inherit" });
  const source = JSON.parse(readFileSync(path.join(SDK_ROOT, "package.json"), "utf8")) as Record<string, unknown>;
  const manifest = {
    name: source.name,
    version: source.version,
    description: source.description,
    license: source.license,
    keywords: source.keywords,
    type: "module",
    engines: source.engines,
    sideEffects: false,
    exports: {
      ".": { types: "./dist/index.d.ts", default: "./dist/index.js" },
      "./openapi.json": "./openapi/gateway-api.json",
      "./package.json": "./package.json",
    },
    main: "./dist/index.js",
    types: "./dist/index.d.ts",
    files: ["dist", "openapi", "README.md"],
    dependencies: source.dependencies,
    publishConfig: { access: "public" },
  };
  writeFileSync(path.join(PACKAGE_DIR, "package.json"), `${JSON.stringify(manifest, null, 2)}\n`);
  cpSync(path.join(SDK_ROOT, "openapi"), path.join(PACKAGE_DIR, "openapi"), { recursive: true });
  cpSync(path.join(SDK_ROOT, "README.md"), path.join(PACKAGE_DIR, "README.md"));
  return PACKAGE_DIR;
}

if (process.argv[1] === fileURLToPath(import.meta.url)) console.log(`built ${path.relative(process.cwd(), build())}`);
