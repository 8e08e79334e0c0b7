// How the console writes statuses, times, tokens and money.

/** `TASK_STATUS_COMPLETED` → `COMPLETED`. */
export function statusName(status: string): string {
  return status.replace(/^TASK_STATUS_/, "");
}

/** `EXECUTION_MODE_SIMPLE` → `simple`. */
export function modeName(mode: string): string {
  return mode.replace(/^EXECUTION_MODE_/, "").toLowerCase();
}

export const TERMINAL_STATUSES = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"]);

export function isFinished(status: string): boolean {
  return TERMINAL_STATUSES.has(statusName(status));
}

export function dateTime(iso: string | null | undefined): string {
  if (!iso) return "—";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleString();
}

export function time(iso: string | null | undefined): string {
  if (!iso) return "";
  const d = new Date(iso);
  return Number.isNaN(d.getTime()) ? iso : d.toLocaleTimeString();
}

export function usd(value: unknown): string {
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(n)) return "—";
  return n === 0 ? "$0" : n < 0.01 ? `$${n.toFixed(6)}` : `$${n.toFixed(4)}`;
}

export function tokens(value: unknown): string {
  const n = typeof value === "number" ? value : Number(value);
  return Number.isFinite(n) ? `${n.toLocaleString()} tokens` : "—";
}

export function ms(value: unknown): string {
  const n = typeof value === "number" ? value : Number(value);
  if (!Number.isFinite(n)) return "";
  return n < 1000 ? `${Math.round(n)} ms` : `${(n / 1000).toFixed(1)} s`;
}

export function shortId(id: string): string {
  return id.length > 13 ? `${id.slice(0, 8)}…` : id;
}

/** Objects and arrays as compact JSON, strings as they are. */
export function show(value: unknown, max = 400): string {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  if (text === undefined) return "";
  return text.length > max ? `${text.slice(0, max)}…` : text;
}
