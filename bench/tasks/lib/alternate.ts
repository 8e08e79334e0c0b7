import type { LoadResult } from "./load.ts";

// Two loads whose ratio is a target (4a: the public port against the gateway itself) run in
// turn, several short rounds each, so that both see the same moments of a shared machine: run
// one after the other, 4a moved from 0.65 to 1.24 between runs of the same code.

/** The rounds of one side as one result: requests and failures summed; rate, p50 and p99 their medians. */
export function mergeRounds(rounds: LoadResult[]): LoadResult {
  if (rounds.length === 0) throw new Error("mergeRounds: no rounds");
  const median = (pick: (r: LoadResult) => number) => {
    const sorted = rounds.map(pick).sort((a, b) => a - b);
    const mid = Math.floor(sorted.length / 2);
    return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
  };
  return {
    requests: rounds.reduce((n, r) => n + r.requests, 0),
    rps: median((r) => r.rps),
    p50: median((r) => r.p50),
    p99: median((r) => r.p99),
    non2xx: rounds.reduce((n, r) => n + r.non2xx, 0),
    errors: rounds.reduce((n, r) => n + r.errors, 0),
  };
}

/** `a` then `b`, `rounds` times; each side's rounds merged. */
export async function alternateLoads(
  rounds: number,
  a: () => Promise<LoadResult>,
  b: () => Promise<LoadResult>,
): Promise<{ a: LoadResult; b: LoadResult; rounds: { a: LoadResult; b: LoadResult }[] }> {
  const done: { a: LoadResult; b: LoadResult }[] = [];
  for (let i = 0; i < rounds; i++) done.push({ a: await a(), b: await b() });
  return { a: mergeRounds(done.map((r) => r.a)), b: mergeRounds(done.map((r) => r.b)), rounds: done };
}

/**
 * The p50s of one pass that alternates a probe with a control request the change under test does
 * not touch (rows 3u–3v: the churned user's request and the fresh user's same request).
 */
export interface ControlledLatency {
  probe: number;
  control: number;
}

/**
 * The probe's latency of a later pass at the host's speed of an earlier one: the control's change
 * between the two passes is taken as the host's, and taken out.
 */
export function hostAdjusted(later: ControlledLatency, earlier: ControlledLatency): number {
  return later.control > 0 && earlier.control > 0 ? (later.probe * earlier.control) / later.control : later.probe;
}
