// The disk's own flush latency during a latency window (1b, 2b): an 8 KB write and an fdatasync
// every INTERVAL_MS in a file beside the database's, timed. A commit waits for a flush of the WAL,
// and one slow flush holds every commit behind it, so this says how much of a window's tail the
// disk made (docs/performance.md "What the tail of 2c is made of"). Async file calls run on
// libuv's pool, so the bench's event loop never waits for them.
import { randomBytes } from "node:crypto";
import fs from "node:fs/promises";
import path from "node:path";
import { pct } from "./percentile.ts";

/** One flush every this many ms: a few percent of the flushes the database makes at these rates. */
const INTERVAL_MS = 50;
const BLOCK = 8192;
/** Blocks rewritten in turn, so the file stays small and no flush has to allocate. */
const BLOCKS = 64;

export interface FlushStats {
  count: number;
  p50: number;
  p99: number;
  max: number;
  /** Flushes that took more than 20 ms. */
  over20: number;
  /**
   * The slowest of those (at most SLOW_LISTED), in the order they began: seconds from the probe's
   * start, so a stall can be set beside the window's other events (a write-back, a periodic sync).
   */
  slow: { atSeconds: number; ms: number }[];
}

const SLOW_MS = 20;
const SLOW_LISTED = 8;

export interface FlushProbe {
  /** Stops the probe, removes its file and returns what it measured (undefined: nothing). */
  stop(): Promise<FlushStats | undefined>;
}

export function startFlushProbe(dir: string, intervalMs = INTERVAL_MS): FlushProbe {
  const file = path.join(dir, `tog-flush-probe-${process.pid}`);
  const times: number[] = [];
  const starts: number[] = [];
  const origin = performance.now();
  let stopping = false;
  let wake: (() => void) | undefined;
  const pause = () =>
    new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, intervalMs);
      wake = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  const loop = (async () => {
    const handle = await fs.open(file, "w");
    try {
      const block = randomBytes(BLOCK);
      // Allocate the blocks first: the window then times flushes of data, not of new extents.
      await handle.write(Buffer.alloc(BLOCK * BLOCKS), 0, BLOCK * BLOCKS, 0);
      await handle.sync();
      for (let i = 0; !stopping; i++) {
        await handle.write(block, 0, BLOCK, (i % BLOCKS) * BLOCK);
        const t0 = performance.now();
        await handle.datasync();
        times.push(performance.now() - t0);
        starts.push((t0 - origin) / 1_000);
        if (!stopping) await pause();
      }
    } finally {
      await handle.close();
      await fs.rm(file, { force: true });
    }
  })();
  return {
    async stop() {
      stopping = true;
      wake?.();
      await loop;
      return flushStats(times, starts);
    },
  };
}

export function flushStats(times: number[], starts: number[] = []): FlushStats | undefined {
  if (times.length === 0) return undefined;
  const sorted = [...times].sort((a, b) => a - b);
  const slow = times
    .map((ms, i) => ({ atSeconds: starts[i] ?? Number.NaN, ms }))
    .filter((f) => f.ms > SLOW_MS)
    .sort((a, b) => b.ms - a.ms)
    .slice(0, SLOW_LISTED)
    .sort((a, b) => a.atSeconds - b.atSeconds);
  return {
    count: sorted.length,
    p50: pct(sorted, 50),
    p99: pct(sorted, 99),
    max: sorted.at(-1)!,
    over20: sorted.filter((t) => t > SLOW_MS).length,
    slow,
  };
}
