import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { flushStats, startFlushProbe } from "../tasks/lib/flush-probe.ts";

describe("flushStats", () => {
  it("gives the percentiles, the worst flush and the count over 20 ms", () => {
    const times = [...Array.from({ length: 98 }, (_, i) => 0.2 + i / 1_000), 25, 140];
    expect(flushStats(times)).toMatchObject({ count: 100, p50: 0.25, p99: 140, max: 140, over20: 2 });
    expect(flushStats([])).toBeUndefined();
  });

  it("lists the slowest flushes over 20 ms by when they began", () => {
    // 20 slow flushes of 21..40 ms among fast ones; the 8 slowest are 33..40 ms.
    const times = Array.from({ length: 40 }, (_, i) => (i % 2 === 0 ? 0.5 : 20 + (i + 1) / 2));
    const starts = times.map((_, i) => i * 0.05);
    const stats = flushStats(times, starts)!;
    expect(stats.over20).toBe(20);
    expect(stats.slow.map((f) => f.ms)).toEqual([33, 34, 35, 36, 37, 38, 39, 40]);
    expect(stats.slow[0]!.atSeconds).toBeCloseTo(1.25);
    expect(stats.slow.map((f) => f.atSeconds)).toEqual([...stats.slow.map((f) => f.atSeconds)].sort((a, b) => a - b));
    expect(flushStats([1, 2], [0, 0.05])!.slow).toEqual([]);
  });
});

describe("startFlushProbe", () => {
  it("times a flush every interval on the disk, stops at once and leaves no file behind", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tog-flush-probe-"));
    const probe = startFlushProbe(dir, 20);
    await new Promise((r) => setTimeout(r, 400));
    const before = performance.now();
    const stats = await probe.stop();
    // A stop does not wait out the pause between flushes.
    expect(performance.now() - before).toBeLessThan(1_000);
    // ~20 flushes in 400 ms; a busy machine may manage fewer.
    expect(stats!.count).toBeGreaterThanOrEqual(5);
    expect(stats!.p50).toBeGreaterThan(0);
    expect(stats!.max).toBeGreaterThanOrEqual(stats!.p99);
    expect(stats!.p99).toBeGreaterThanOrEqual(stats!.p50);
    for (const f of stats!.slow) expect(f.atSeconds).toBeGreaterThanOrEqual(0);
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
