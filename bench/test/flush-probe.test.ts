import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { flushStats, startFlushProbe } from "../tasks/lib/flush-probe.ts";

describe("flushStats", () => {
  it("gives the percentiles, the worst flush and the count over 20 ms", () => {
    const times = [...Array.from({ length: 98 }, (_, i) => 0.2 + i / 1_000), 25, 140];
    expect(flushStats(times)).toEqual({ count: 100, p50: 0.25, p99: 140, max: 140, over20: 2 });
    expect(flushStats([])).toBeUndefined();
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
    expect(fs.readdirSync(dir)).toEqual([]);
  });
});
