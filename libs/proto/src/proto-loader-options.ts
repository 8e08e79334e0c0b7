import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Options } from "@grpc/proto-loader";

// One set of options for both the runtime loader and the type generator
// (scripts/generate.ts turns them into CLI flags), so the generated `__Output` types
// describe exactly the objects the loader hands us: snake_case field names, int64 as JS
// numbers (every int64 here — seqs, counts, tokens, durations — stays far below 2^53),
// enums as their names, unset scalars as their defaults, proto3 `optional` fields absent
// when unset.
export const PROTO_LOADER_OPTIONS = {
  keepCase: true,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
} as const satisfies Options;

/** Top-level proto/ directory of the repository (the include root). */
export const PROTO_ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "..", "..", "proto");

/** Relative to PROTO_ROOT. */
export const ORCHESTRATOR_PROTO = "orchestrator/v1/orchestrator.proto";
