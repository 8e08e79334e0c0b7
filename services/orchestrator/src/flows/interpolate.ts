// `${var}` references in system prompts and templates. One pass, no recursion: a value that
// itself contains `${...}` is inserted as written, so a caller's parameter can never pull in
// another variable. An unknown variable is left as written (prompts may legitimately contain
// `${...}`, e.g. shell or JavaScript snippets); a dotted name reads into nested objects.

const REFERENCE = /\$\{([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z0-9_]+)*)\}/g;

export interface Interpolation {
  text: string;
  /** References found in the text. */
  references: number;
  /** References that were replaced (the rest were unknown and kept). */
  replaced: number;
}

export function interpolate(text: string, vars: Readonly<Record<string, unknown>>): Interpolation {
  let references = 0;
  let replaced = 0;
  const out = text.replace(REFERENCE, (whole, name: string) => {
    references++;
    const value = lookup(vars, name);
    if (value === undefined || value === null) return whole;
    replaced++;
    return typeof value === "string" ? value : typeof value === "object" ? JSON.stringify(value) : String(value);
  });
  return { text: out, references, replaced };
}

function lookup(vars: Readonly<Record<string, unknown>>, name: string): unknown {
  let current: unknown = vars;
  for (const part of name.split(".")) {
    if (current === null || typeof current !== "object" || Array.isArray(current) || !Object.hasOwn(current, part))
      return undefined;
    current = (current as Record<string, unknown>)[part];
  }
  return current;
}
