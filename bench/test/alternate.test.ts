import { describe, expect, it } from "vitest";
import { alternateLoads, mergeRounds } from "../tasks/lib/alternate.ts";
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
