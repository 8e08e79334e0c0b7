/**
 * A text as a PostgreSQL string literal, for statements sent in the simple protocol, which takes
 * no parameters (the submit's `BEGIN; EXECUTE …` round trip, docs/performance.md "Submit"). Same
 * output as pg's `escapeLiteral`: quotes doubled, and with a backslash in the text, backslashes
 * doubled in an `E''` literal. pg's builds the result one character at a time, which made it a
 * third of the orchestrator's allocation per submit (a batch's rows are one JSON text).
 */
export function sqlLiteral(text: string): string {
  const quoted = `'${text.replaceAll("'", "''")}'`;
  return text.includes("\\") ? ` E${quoted.replaceAll("\\", "\\\\")}` : quoted;
}

/**
 * Values as a PostgreSQL array literal (`{"a","b",NULL}`), for an array parameter (`$1::text[]`,
 * `$2::uuid[]`, `$3::int[]`) of a batch statement. Same text as pg's own serialization of a JS
 * array, which builds it one concatenation per element and allocated a sixth of the worker's
 * bytes per task (docs/performance.md "What the services allocate"). Elements: strings,
 * numbers, bigints, booleans, null or undefined (NULL); anything else is refused rather than
 * guessed at.
 */
export function sqlArray(values: readonly unknown[]): string {
  const parts = new Array<string>(values.length);
  for (let i = 0; i < values.length; i++) {
    const v = values[i];
    if (v === null || v === undefined) {
      parts[i] = "NULL";
      continue;
    }
    const text = typeof v === "string" ? v : primitiveText(v);
    parts[i] =
      text.includes("\\") || text.includes('"')
        ? `"${text.replaceAll("\\", "\\\\").replaceAll('"', '\\"')}"`
        : `"${text}"`;
  }
  return `{${parts.join(",")}}`;
}

function primitiveText(v: unknown): string {
  if (typeof v === "number" || typeof v === "bigint" || typeof v === "boolean") return String(v);
  throw new TypeError(`sqlArray: unsupported element of type ${typeof v}`);
}
