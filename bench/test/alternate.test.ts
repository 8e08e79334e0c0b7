import { describe, expect, it } from "vitest";
import { alternateLoads, hostAdjusted, mergeRounds } from "../tasks/lib/alternate.ts";
import type { LoadResult } from "../tasks/lib/load.ts";

const result = (rps: number, p99: number, failed = 0): LoadResult => ({
  requests: rps * 5,
  rps,
  p50: p99 / 4,
  p99,
  non2xx: failed,
  errors: 0,
});

describe("mergeRounds", () => {
  it("sums requests and failures and takes the medians of rate and latency", () => {
    expect(mergeRounds([result(100, 8), result(300, 4, 1), result(200, 20)])).toEqual({
      requests: 3_000,
      rps: 200,
      p50: 2,
      p99: 8,
      non2xx: 1,
      errors: 0,
    });
    // An even count: the mean of the middle two.
    expect(mergeRounds([result(100, 8), result(300, 4)]).rps).toBe(200);
    expect(() => mergeRounds([])).toThrow();
  });
});

describe("alternateLoads", () => {
  it("runs the two sides in turn and merges each side's rounds", async () => {
    const order: string[] = [];
    let n = 0;
    const side = (name: string) => async () => {
      order.push(name);
      n++;
      return result(n * 100, n);
    };
    const out = await alternateLoads(3, side("a"), side("b"));
    expect(order).toEqual(["a", "b", "a", "b", "a", "b"]);
    expect(out.a.rps).toBe(300); // rounds 100, 300, 500
    expect(out.b.rps).toBe(400); // rounds 200, 400, 600
    expect(out.rounds).toHaveLength(3);
  });
});

describe("hostAdjusted", () => {
  it("takes the control's change between two passes out of the probe's", () => {
    // The host got 1.5× slower: the control 4 → 6 ms, the probe 5 → 7.5 ms is no change of its own.
    expect(hostAdjusted({ probe: 7.5, control: 6 }, { probe: 5, control: 4 })).toBeCloseTo(5);
    // The same host, a probe twice as slow: all of it stays.
    expect(hostAdjusted({ probe: 10, control: 4 }, { probe: 5, control: 4 })).toBeCloseTo(10);
    // A faster host hides no regression: control 4 → 2 ms, probe 5 → 5 ms is twice as slow.
    expect(hostAdjusted({ probe: 5, control: 2 }, { probe: 5, control: 4 })).toBeCloseTo(10);
    // No control measured: the probe as it is.
    expect(hostAdjusted({ probe: 7, control: 0 }, { probe: 5, control: 4 })).toBe(7);
  });
});
