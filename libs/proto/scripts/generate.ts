// Generates the TypeScript types of the .proto files into src/generated/ with
// proto-loader-gen-types (pure JavaScript; no protoc needed). Imports carry the `.ts`
// extension so Node's type stripping and tsc (NodeNext) both resolve them.
import { spawnSync } from "node:child_process";
import { rmSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { ORCHESTRATOR_PROTO, PROTO_LOADER_OPTIONS, PROTO_ROOT } from "../src/proto-loader-options.ts";

const pkgDir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const outDir = path.join(pkgDir, "src", "generated");
const require = createRequire(import.meta.url);
const bin = path.join(path.dirname(require.resolve("@grpc/proto-loader")), "..", "bin", "proto-loader-gen-types.js");

const o = PROTO_LOADER_OPTIONS;
const flags = [
  ...(o.keepCase ? ["--keepCase"] : []),
  `--longs=${o.longs.name}`,
  `--enums=${o.enums.name}`,
  ...(o.defaults ? ["--defaults"] : []),
  ...(o.oneofs ? ["--oneofs"] : []),
];

// Start clean so a message removed from the .proto leaves no stale file behind.
rmSync(outDir, { recursive: true, force: true });
const result = spawnSync(
  process.execPath,
  [
    bin,
    ...flags,
    "--grpcLib=@grpc/grpc-js",
    "--includeComments",
    "--targetFileExtension=.ts",
    "--importFileExtension=.ts",
    "--includeDirs=.",
    `--outDir=${outDir}`,
    ORCHESTRATOR_PROTO,
  ],
  { cwd: PROTO_ROOT, stdio: "inherit" },
);
process.exit(result.status ?? 1);
