// `prisma generate` does not use the schema engine, but the CLI insists that one exists.
// Where none was downloaded (offline machines, installs without scripts) point it at a
// harmless existing file so generation still works.
import { spawnSync } from "node:child_process";
import { fileURLToPath } from "node:url";
import path from "node:path";

const dir = path.dirname(path.dirname(fileURLToPath(import.meta.url)));
const env = { ...process.env };
env.PRISMA_SCHEMA_ENGINE_BINARY ??= process.execPath;
env.PRISMA_HIDE_UPDATE_MESSAGE = "1";
const bin = path.join(dir, "node_modules", ".bin", "prisma");
const fallback = path.resolve(dir, "..", "..", "node_modules", ".bin", "prisma");
const { existsSync } = await import("node:fs");
const result = spawnSync(existsSync(bin) ? bin : fallback, ["generate"], { cwd: dir, env, stdio: "inherit" });
process.exit(result.status ?? 1);
