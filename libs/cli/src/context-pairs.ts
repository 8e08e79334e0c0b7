/**
 * `--context k=v` pairs → an object. A value that is valid JSON (number, boolean, null, object,
 * array, quoted string) is taken as that; anything else is a plain string.
 */
export function parseContextPairs(pairs: readonly string[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const pair of pairs) {
    const eq = pair.indexOf("=");
    if (eq <= 0) throw new Error(`--context expects key=value, got "${pair}"`);
    const key = pair.slice(0, eq).trim();
    const raw = pair.slice(eq + 1);
    let value: unknown = raw;
    try {
      value = JSON.parse(raw);
    } catch {
      // a plain string
    }
    out[key] = value;
  }
  return out;
}
