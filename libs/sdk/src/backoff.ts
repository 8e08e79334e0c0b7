import { abortError } from "./errors.ts";

export interface BackoffOptions {
  /** First delay in ms (default 500). */
  initialMs?: number;
  /** Largest delay in ms (default 30 000). */
  maxMs?: number;
}

/**
 * Delay before attempt `attempt` (1-based): exponential from `base`, capped, with full jitter
 * (a random delay between half and all of it) so many clients that lost the same server do not
 * come back in step.
 */
export function backoffDelay(attempt: number, options: BackoffOptions = {}, base?: number): number {
  const initial = base ?? options.initialMs ?? 500;
  const max = options.maxMs ?? 30_000;
  const exp = Math.min(max, initial * 2 ** Math.max(0, attempt - 1));
  return Math.round(exp / 2 + Math.random() * (exp / 2));
}

/** Resolves after `ms`, or rejects with the signal's reason when it aborts first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(abortError(signal));
      return;
    }
    const onAbort = () => {
      clearTimeout(timer);
      reject(abortError(signal!));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    }, ms);
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** Retry-After in seconds (delta-seconds or an HTTP date), or undefined. */
export function parseRetryAfter(value: string | null): number | undefined {
  if (value === null || value.trim() === "") return undefined;
  const n = Number(value);
  if (Number.isFinite(n) && n >= 0) return n;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, (at - Date.now()) / 1000);
}
