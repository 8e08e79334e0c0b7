import fs from "node:fs";

// A page written without a flush stays dirty in the kernel until it is older than
// vm.dirty_expire_centisecs; the flusher looks for such pages every vm.dirty_writeback_centisecs.
// So what a saturation phase writes reaches the disk in one burst about that long after it, and
// every WAL flush queues behind it (docs/performance.md "Latency windows after a saturation phase").

const readCentisecs = (name: string, fallback: number): number => {
  try {
    const v = Number(fs.readFileSync(`/proc/sys/vm/${name}`, "utf8").trim());
    return Number.isFinite(v) && v > 0 ? v : fallback;
  } catch {
    return fallback;
  }
};

/**
 * Seconds after which every page dirtied before now has been handed to the disk by the periodic
 * write-back (Linux's defaults, 30 s + 5 s, where /proc/sys/vm cannot be read), plus time for the
 * burst itself to be written.
 */
export function writebackDueSeconds(marginSeconds = 5): number {
  const expire = readCentisecs("dirty_expire_centisecs", 3_000);
  const interval = readCentisecs("dirty_writeback_centisecs", 500);
  return Math.ceil((expire + interval) / 100 + marginSeconds);
}
