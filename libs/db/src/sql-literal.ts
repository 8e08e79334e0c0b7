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
