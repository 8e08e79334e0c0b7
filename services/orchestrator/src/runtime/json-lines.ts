// JSON texts sent to PostgreSQL as one text parameter, one text per line, instead of a text[]
// (docs/performance.md "JSON texts as lines"). In an array literal every `"` and `\` of each
// text is escaped by the driver and unescaped again by PostgreSQL, and JSON is full of quotes:
// that was the largest single function of the worker (pg's escapeElement, 6 % of its CPU). A
// text made by JSON.stringify never holds a raw line feed (JSON escapes it inside strings), so
// the lines split back exactly. Only for such texts: anything else stays in an array.

/** Stands for SQL NULL: not a JSON text, so never the output of JSON.stringify. */
const NULL_LINE = "-";

/** The texts joined by line feeds; `null` becomes NULL_LINE. */
export function jsonLines(texts: readonly (string | null)[]): string {
  return texts.map((t) => t ?? NULL_LINE).join("\n");
}

/** SQL for the text[] a `jsonLines` parameter stands for (the same length, NULLs where they were). */
export function linesArray(param: string): string {
  return `string_to_array(${param}::text, E'\\n', '${NULL_LINE}')`;
}
