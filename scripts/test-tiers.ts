import { existsSync, readdirSync, readFileSync } from "node:fs";
import path from "node:path";

// Which vitest project a test file belongs to (vitest.config.ts), decided by what it, or a
// helper it imports by a relative path, uses, so a new test lands in the right tier without a
// list to keep:
//   e2e          tests-e2e/**, and any test that starts a process (child_process);
//   integration  a test that opens the real PostgreSQL, NATS or Redis (the testkit harness or a
//                client factory);
//   unit         everything else: no I/O beyond an in-process HTTP server on loopback. The unit
//                project points the test infrastructure at closed ports, so a unit test that
//                reaches for it fails instead of passing slowly.
// Where the code under test does the I/O out of sight of these markers, the file says so in a
// line comment of its own: `// test-tier: e2e` (or `integration`).

export type Tier = "unit" | "integration" | "e2e";

/**
 * Unit files share their worker's modules (no per-file isolation: most of a unit run is module
 * loading otherwise), except those that set process-wide state, such as the OpenTelemetry
 * provider; they run in a project of their own, isolated.
 */
const PROCESS_STATE = /\binitTelemetry\b/;

const PROCESS = /from "node:child_process"|\blintOpenApi\b/;
const INFRA =
  /\b(createTestDatabase|openTestBus|provisionTestBus|testInfraConfig|createDbClient|connectBus|createRedis)\b/;
const DIRECTIVE = /^\/\/ test-tier: (unit|integration|e2e)\b/m;
const RELATIVE_IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\bimport\s+)["'](\.{1,2}\/[^"']+\.ts)["']/g;

/** The file and every test helper (a file under a test/ folder) it imports by a relative path, transitively; code under test is not read. */
function testSources(file: string, seen = new Set<string>()): string[] {
  if (seen.has(file) || !existsSync(file)) return [];
  seen.add(file);
  const text = readFileSync(file, "utf8");
  const sources = [text];
  for (const m of text.matchAll(RELATIVE_IMPORT)) {
    const next = path.resolve(path.dirname(file), m[1]!);
    if (!next.includes(`${path.sep}test${path.sep}`) || next.includes("node_modules")) continue;
    sources.push(...testSources(next, seen));
  }
  return sources;
}

export function tierOf(root: string, file: string): Tier {
  const rel = path.relative(root, file);
  if (rel.startsWith(`tests-e2e${path.sep}`)) return "e2e";
  const sources = testSources(path.resolve(root, file));
  const declared = DIRECTIVE.exec(sources[0] ?? "")?.[1] as Tier | undefined;
  if (declared) return declared;
  if (sources.some((s) => PROCESS.test(s))) return "e2e";
  if (sources.some((s) => INFRA.test(s))) return "integration";
  return "unit";
}

const TEST_DIRS = ["libs", "services", "scripts", "chaos", "bench"];

function testFiles(root: string, dir: string): string[] {
  return readdirSync(path.join(root, dir), { withFileTypes: true }).flatMap((e) => {
    if (e.name === "node_modules" || e.name === "dist" || e.name === "generated") return [];
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) return testFiles(root, rel);
    return e.name.endsWith(".test.ts") && rel.split(path.sep).includes("test") ? [rel] : [];
  });
}

/** Every test file outside tests-e2e, relative to `root`, by tier; `unitIsolated` is the part of `unit` that needs isolation. */
export function testTiers(root: string): Record<Tier | "unitIsolated", string[]> {
  const tiers: Record<Tier | "unitIsolated", string[]> = { unit: [], unitIsolated: [], integration: [], e2e: [] };
  for (const file of TEST_DIRS.flatMap((d) => testFiles(root, d))) {
    const tier = tierOf(root, file);
    const isolated = tier === "unit" && PROCESS_STATE.test(readFileSync(path.join(root, file), "utf8"));
    tiers[isolated ? "unitIsolated" : tier].push(file);
  }
  return tiers;
}
