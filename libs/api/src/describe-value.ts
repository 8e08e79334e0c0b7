const MAX_SHOWN = 64;

/** A client's value for an error message: JSON form (so `"5"` and `5` differ), cut to a readable length. */
export function describeValue(value: unknown): string {
  let shown: string;
  try {
    shown = JSON.stringify(value) ?? String(value);
  } catch {
    shown = String(value);
  }
  return shown.length > MAX_SHOWN ? `${shown.slice(0, MAX_SHOWN)}…` : shown;
}
