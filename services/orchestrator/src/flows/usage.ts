// Token and cost totals. Costs are summed with the catalog's rounding (1e-12 USD), so binary
// float noise never shows up in an event.

export interface UsageTotals {
  inputTokens: number;
  outputTokens: number;
  totalTokens: number;
  costUsd: number;
}

export const ZERO_USAGE: Readonly<UsageTotals> = Object.freeze({
  inputTokens: 0,
  outputTokens: 0,
  totalTokens: 0,
  costUsd: 0,
});

export function addUsage(...items: readonly UsageTotals[]): UsageTotals {
  const sum = { ...ZERO_USAGE };
  for (const u of items) {
    sum.inputTokens += u.inputTokens;
    sum.outputTokens += u.outputTokens;
    sum.totalTokens += u.totalTokens;
    sum.costUsd += u.costUsd;
  }
  sum.costUsd = Math.round(sum.costUsd * 1e12) / 1e12;
  return sum;
}

/** Milliseconds between two clock readings, as the non-negative integer events carry. */
export function elapsedMs(since: number, now: number = Date.now()): number {
  return Math.max(0, Math.round(now - since));
}

/** At most `max` characters, with an ellipsis when cut (message contents, thoughts). */
export function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max - 1)}…`;
}
