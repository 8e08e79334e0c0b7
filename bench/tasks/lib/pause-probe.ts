// The bench's pause probe, preloaded into every service when BENCH_PAUSES is on (NODE_OPTIONS
// `--import`): it appends each garbage collection and each late wake-up of the event loop to
// `<BENCH_PAUSE_DIR>/<service>-<pid>.log`, as `<epoch ms> gc <kind> <ms>` and
// `<epoch ms> late <ms>`. tail.ts lays these beside the load client's slow requests
// (docs/performance.md "How the task bench measures").
import fs from "node:fs";
import path from "node:path";
import { PerformanceObserver, performance } from "node:perf_hooks";

const dir = process.env.BENCH_PAUSE_DIR;
/** The loop is checked this often; a wake-up later than LATE_MS past it is recorded. */
const TICK_MS = 10;
const LATE_MS = 15;

if (dir) {
  // services/<svc>/src/main.ts is <svc>; any other entry (the worker's worker.ts, a CLI) its file's name.
  const entry = process.argv[1] ?? "node";
  const file = path.basename(entry, path.extname(entry));
  const service = file === "main" ? (entry.match(/services\/([^/]+)\//)?.[1] ?? file) : file;
  const fd = fs.openSync(path.join(dir, `${service}-${process.pid}.log`), "a");
  const now = () => performance.timeOrigin + performance.now();
  const write = (line: string) => fs.writeSync(fd, `${now().toFixed(1)} ${line}\n`);
  new PerformanceObserver((list) => {
    for (const e of list.getEntries()) {
      const kind = (e as { detail?: { kind?: number } }).detail?.kind ?? 0;
      // The entry's own start, not the observer's (which runs a little after the collection).
      fs.writeSync(fd, `${(performance.timeOrigin + e.startTime).toFixed(1)} gc ${kind} ${e.duration.toFixed(1)}\n`);
    }
  }).observe({ entryTypes: ["gc"] });
  let last = performance.now();
  setInterval(() => {
    const t = performance.now();
    const late = t - last - TICK_MS;
    if (late > LATE_MS) write(`late ${late.toFixed(1)}`);
    last = t;
  }, TICK_MS).unref();
}
