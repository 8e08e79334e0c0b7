/** Where and how the CLI prints. */
export interface Output {
  stdout: NodeJS.WritableStream;
  stderr: NodeJS.WritableStream;
  json: boolean;
  tty: boolean;
  color: boolean;
}

export function createOutput(json: boolean): Output {
  const tty = process.stdout.isTTY === true;
  return { stdout: process.stdout, stderr: process.stderr, json, tty, color: tty && !process.env.NO_COLOR };
}

/** Prints a value: JSON with --json, else a readable form. */
export function print(out: Output, value: unknown, human?: () => string): void {
  if (out.json || human === undefined) out.stdout.write(`${JSON.stringify(value, null, out.json ? 0 : 2)}\n`);
  else out.stdout.write(`${human()}\n`);
}

/** A fixed-width table for lists. */
export function table(rows: string[][]): string {
  if (rows.length === 0) return "";
  const widths = rows[0]!.map((_, i) => Math.max(...rows.map((r) => (r[i] ?? "").length)));
  return rows.map((r) => r.map((c, i) => (i === r.length - 1 ? c : c.padEnd(widths[i]!))).join("  ")).join("\n");
}
