import { mkdirSync, writeFileSync } from "node:fs";
import path from "node:path";

// One row per target of issue 10 ("What to reach"): what was measured, what it is compared
// with, the ratio (or the value itself for absolute targets), the target and PASS/FAIL.

export interface TargetRow {
  id: string;
  name: string;
  measured: string;
  baseline: string;
  ratio: string;
  target: string;
  /** undefined: not measured in this run. */
  pass: boolean | undefined;
}

export const fmt = (n: number | undefined, digits?: number): string => {
  if (n === undefined || !Number.isFinite(n)) return "-";
  const d = digits ?? (Math.abs(n) < 10 ? 2 : Math.abs(n) < 100 ? 1 : 0);
  return n.toLocaleString("en-US", { minimumFractionDigits: d, maximumFractionDigits: d });
};

export const ratioOf = (a: number, b: number) => (Number.isFinite(a) && Number.isFinite(b) && b !== 0 ? a / b : NaN);

export function markdownTable(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? "").length)));
  const line = (cells: string[]) => `| ${cells.map((c, i) => (c ?? "").padEnd(widths[i]!)).join(" | ")} |`;
  return [line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n");
}

export function targetsTable(rows: TargetRow[]): string {
  return markdownTable(
    ["#", "target", "measured", "baseline", "ratio", "target", "result"],
    rows.map((r) => [
      r.id,
      r.name,
      r.measured,
      r.baseline,
      r.ratio,
      r.target,
      r.pass === undefined ? "n/a" : r.pass ? "PASS" : "FAIL",
    ]),
  );
}

/** Writes `<dir>/tasks-<stamp>-<pg>.md` and `.json`; returns the markdown path. */
export function writeResults(dir: string, name: string, markdown: string, json: unknown): string {
  mkdirSync(dir, { recursive: true });
  const md = path.join(dir, `${name}.md`);
  writeFileSync(md, markdown);
  writeFileSync(path.join(dir, `${name}.json`), `${JSON.stringify(json, null, 2)}\n`);
  return md;
}
