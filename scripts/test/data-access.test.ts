import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { describe, expect, it } from "vitest";

// Where data access lives (docs/architecture.md "Tables"): every SQL statement and every Prisma
// model call of services/ and libs/ is in a `*.repository.ts` file, and a file touches a table
// only if it lies where the Tables section says that table's statements are (its owner's
// service or the owner's lib). Checked on the source text: raw SQL (`$queryRaw`, `$executeRaw`,
// their Unsafe forms, a pg `.query(`), interactive transactions, and `<client>.<model>.<op>(`.

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../..");

/** Tooling, not data access of a service: migrations and the test harness. */
const TOOLING = new Set(["libs/db/src/migrate.ts", "libs/db/src/cli/migrate.ts"]);
const TOOLING_DIRS = ["libs/testkit/", "libs/db/src/generated/"];

const SKIP = new Set(["node_modules", "generated", "dist", "web", "test"]);

function sourceFiles(dir: string): string[] {
  return readdirSync(path.join(ROOT, dir), { withFileTypes: true }).flatMap((e) => {
    if (SKIP.has(e.name)) return [];
    const rel = `${dir}/${e.name}`;
    if (e.isDirectory()) return sourceFiles(rel);
    return /\.(ts|mts)$/.test(e.name) && !/\.test\.ts$/.test(e.name) ? [rel] : [];
  });
}

function allSources(): string[] {
  return ["libs", "services"]
    .flatMap((group) => readdirSync(path.join(ROOT, group)).map((d) => `${group}/${d}`))
    .flatMap((dir) => sourceFiles(dir))
    .filter((f) => !TOOLING.has(f) && !TOOLING_DIRS.some((d) => f.startsWith(d)));
}

/** The code of a file without its comment lines (prose may quote a statement). */
function codeOf(source: string): string {
  return source
    .split("\n")
    .filter((line) => !/^\s*(\/\/|\/?\*)/.test(line))
    .join("\n");
}

interface Model {
  /** The client's property: `task`, `apiKey`. */
  property: string;
  table: string;
}

function models(): Model[] {
  const schema = readFileSync(path.join(ROOT, "libs/db/prisma/schema.prisma"), "utf8");
  return [...schema.matchAll(/^model (\w+) \{([\s\S]*?)^\}/gm)].map((m) => ({
    property: m[1]![0]!.toLowerCase() + m[1]!.slice(1),
    table: /@@map\("(\w+)"\)/.exec(m[2]!)?.[1] ?? m[1]!,
  }));
}

const RAW = /\$(queryRaw|executeRaw)(Unsafe)?\b|\.query\s*(<|\()|\$transaction\s*\(/;
const OPS =
  "findUnique|findUniqueOrThrow|findFirst|findFirstOrThrow|findMany|create|createMany|createManyAndReturn|update|updateMany|updateManyAndReturn|upsert|delete|deleteMany|count|aggregate|groupBy";

/** The data access a file's code does: whether it has any, and the tables it names. */
function accessOf(code: string, all: Model[], tables: Set<string>): { any: boolean; tables: string[] } {
  const modelCall = new RegExp(`\\.(${all.map((m) => m.property).join("|")})\\.(${OPS})\\s*\\(`, "g");
  const calls = [...code.matchAll(modelCall)].map((m) => all.find((x) => x.property === m[1])!.table);
  const named = [...code.matchAll(/\b(?:FROM|JOIN|INTO|UPDATE)\s+"?([a-z_]+)"?/g)]
    .map((m) => m[1]!)
    .filter((t) => tables.has(t));
  return { any: RAW.test(code) || calls.length > 0, tables: [...new Set([...calls, ...named])].sort() };
}

/** Table → the paths its statements may live under, from docs/architecture.md "Tables". */
function placesFromDocs(): Map<string, string[]> {
  const doc = readFileSync(path.join(ROOT, "docs/architecture.md"), "utf8");
  const section = doc.slice(doc.indexOf("## Tables"), doc.indexOf("\n## ", doc.indexOf("## Tables") + 1));
  const header = section.split("\n").find((l) => l.startsWith("| Table"))!;
  const column = header.split("|").findIndex((c) => c.trim() === "Statements in");
  const places = new Map<string, string[]>();
  for (const line of section.split("\n")) {
    const cells = line.split("|");
    const table = /^\s*`(\w+)`\s*$/.exec(cells[1] ?? "")?.[1];
    if (!table || column < 0) continue;
    places.set(
      table,
      [...(cells[column] ?? "").matchAll(/`([\w/.-]+)`/g)].map((m) => m[1]!),
    );
  }
  return places;
}

function violations(files: { file: string; source: string }[], places: Map<string, string[]>): string[] {
  const all = models();
  const tables = new Set(all.map((m) => m.table));
  const found: string[] = [];
  for (const { file, source } of files) {
    const access = accessOf(codeOf(source), all, tables);
    if (access.any && !file.endsWith(".repository.ts")) found.push(`${file}: data access outside a *.repository.ts`);
    for (const table of access.tables) {
      const allowed = places.get(table) ?? [];
      if (!allowed.some((p) => file === p || file.startsWith(`${p}/`)))
        found.push(`${file}: touches \`${table}\`, whose statements belong in ${allowed.join(", ") || "(no entry)"}`);
    }
  }
  return found;
}

describe("data access", () => {
  const places = placesFromDocs();
  const files = allSources().map((file) => ({ file, source: readFileSync(path.join(ROOT, file), "utf8") }));

  it("reads the Tables section and the schema's models", () => {
    expect([...places.keys()]).toEqual(expect.arrayContaining(["users", "sessions", "tasks", "task_events"]));
    expect(places.get("tasks")).toContain("services/orchestrator");
    expect(models()).toEqual(expect.arrayContaining([{ property: "apiKey", table: "api_keys" }]));
    expect(files.some((f) => f.file === "services/orchestrator/src/tasks/task.repository.ts")).toBe(true);
  });

  it("every statement is in a *.repository.ts where the Tables section places its table", () => {
    expect(violations(files, places)).toEqual([]);
  });

  it("the check sees SQL outside a repository and a table touched from the wrong place", () => {
    const found = violations(
      [
        { file: "services/session/src/sessions/title.ts", source: "await db.$queryRaw`SELECT 1`;" },
        { file: "services/stream/src/owner.repository.ts", source: "await db.task.findUnique({ where: { id } });" },
        {
          file: "services/session/src/x.repository.ts",
          source: "// UPDATE tasks in prose is fine\nawait pool.query(`UPDATE sessions SET title = $1`);",
        },
        { file: "libs/edge/src/auth/user.repository.ts", source: "await this.db.user.findMany({});" },
      ],
      places,
    );
    expect(found).toEqual([
      "services/session/src/sessions/title.ts: data access outside a *.repository.ts",
      expect.stringMatching(/^services\/stream\/src\/owner\.repository\.ts: touches `tasks`/),
      expect.stringMatching(/^services\/session\/src\/x\.repository\.ts: touches `sessions`/),
    ]);
  });
});
