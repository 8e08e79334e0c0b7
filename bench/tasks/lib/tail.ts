// Which pauses of the services the slow requests of a load window met (BENCH_PAUSES): the load
// client's requests (start, latency) and the pause probe's logs (pause-probe.ts), both on the
// wall clock in ms.
import fs from "node:fs";
import path from "node:path";
import { pct } from "./percentile.ts";

/**
 * The environment that preloads the pause probe into a Node process (a service, the load client)
 * and points its logs at `dir`.
 */
export function pauseProbeEnv(dir: string): { NODE_OPTIONS: string; BENCH_PAUSE_DIR: string } {
  return { NODE_OPTIONS: `--import ${new URL("./pause-probe.ts", import.meta.url).href}`, BENCH_PAUSE_DIR: dir };
}

export interface Request {
  start: number;
  ms: number;
}

export interface Pause {
  service: string;
  /** When it began; a late wake-up when it was noticed, at its end. */
  at: number;
  /**
   * `gc <kind>` (V8's kind: 1 minor, 4 major, 8 incremental, 16 weak callbacks) or `late`; for
   * `postgres`, the slow statement (`COMMIT`, `execute final-write`) or `autovacuum <what> <table>`.
   */
  what: string;
  ms: number;
}

export interface SlowCluster {
  start: number;
  end: number;
  requests: number;
  worstMs: number;
  /** The pauses that began while the cluster's requests were in flight, or just before. */
  pauses: Pause[];
}

/** Slow: at least this share of the window's p99. Clusters: slow requests started within GAP_MS of each other. */
const SLOW_SHARE = 0.7;
const GAP_MS = 60;
/** A pause this long or longer counts; shorter ones are noise at these latencies. */
const MIN_PAUSE_MS = 8;
/** A pause still going up to this long before a cluster's first request can have held it back. */
const LEAD_MS = 50;

export function slowClusters(requests: Request[], pauses: Pause[]): SlowCluster[] {
  if (requests.length === 0) return [];
  const sorted = requests.map((r) => r.ms).sort((a, b) => a - b);
  const p99 = pct(sorted, 99);
  const slow = requests.filter((r) => r.ms >= SLOW_SHARE * p99).sort((a, b) => a.start - b.start);
  const clusters: SlowCluster[] = [];
  let lastStart = -Infinity;
  for (const r of slow) {
    const current = clusters.at(-1);
    if (current && r.start - lastStart < GAP_MS) {
      current.requests++;
      current.end = Math.max(current.end, r.start + r.ms);
      current.worstMs = Math.max(current.worstMs, r.ms);
    } else clusters.push({ start: r.start, end: r.start + r.ms, requests: 1, worstMs: r.ms, pauses: [] });
    lastStart = r.start;
  }
  const long = pauses.filter((p) => p.ms >= MIN_PAUSE_MS);
  // A late wake-up is logged when noticed, at its end; the other pauses at their start.
  const endOf = (p: Pause) => (p.what === "late" ? p.at : p.at + p.ms);
  for (const c of clusters) c.pauses = long.filter((p) => endOf(p) >= c.start - LEAD_MS && p.at <= c.end);
  return clusters;
}

export function readRequests(file: string): Request[] {
  return lines(file).map((l) => {
    const [start, ms] = l.split(" ").map(Number);
    return { start: start!, ms: ms! };
  });
}

/** Every pause logged in `dir`, of every service. */
export function readPauses(dir: string): Pause[] {
  const out: Pause[] = [];
  for (const file of fs.readdirSync(dir).filter((f) => f.endsWith(".log"))) {
    const service = file.replace(/-\d+\.log$/, "");
    for (const l of lines(path.join(dir, file))) {
      const parts = l.split(" ");
      const at = Number(parts[0]);
      if (parts[1] === "gc") out.push({ service, at, what: `gc ${parts[2]}`, ms: Number(parts[3]) });
      else if (parts[1] === "late") out.push({ service, at, what: "late", ms: Number(parts[2]) });
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/**
 * The slow statements and autovacuums of the bench's own PostgreSQL, from its log as
 * `startPrivatePostgres({ slowStatementsMs })` writes it (`log_line_prefix = '%n [%p] '`: epoch
 * seconds with ms). PostgreSQL logs each when it ends, so each starts its duration earlier. A
 * statement held up by another backend's WAL flush shows as a slow `COMMIT` or write
 * (docs/performance.md "What the tail of 2c is made of").
 */
export function readPostgresPauses(logFile: string): Pause[] {
  const out: Pause[] = [];
  let vacuum: { end: number; what: string } | undefined;
  for (const l of fs.existsSync(logFile) ? lines(logFile) : []) {
    const statement = l.match(
      /^(\d+\.\d+) \[\d+\] LOG: {2}duration: ([\d.]+) ms {2}(?:statement: (.*)|execute ([^:]+):)/,
    );
    if (statement) {
      const ms = Number(statement[2]);
      const text =
        statement[3] !== undefined ? statement[3].split(/\s+/).slice(0, 3).join(" ") : `execute ${statement[4]}`;
      out.push({ service: "postgres", at: Number(statement[1]) * 1_000 - ms, what: text, ms });
      continue;
    }
    const auto = l.match(/^(\d+\.\d+) \[\d+\] LOG: {2}automatic (vacuum|analyze) of table "(?:[^."]+\.)*([^."]+)"/);
    if (auto) {
      vacuum = { end: Number(auto[1]) * 1_000, what: `autovacuum ${auto[2]} ${auto[3]}` };
      continue;
    }
    // The autovacuum's own lines follow it; the last says how long it took.
    const elapsed = vacuum && l.match(/elapsed: ([\d.]+) s/);
    if (vacuum && elapsed) {
      const ms = Number(elapsed[1]) * 1_000;
      out.push({ service: "postgres", at: vacuum.end - ms, what: vacuum.what, ms });
      vacuum = undefined;
    }
  }
  return out.sort((a, b) => a.at - b.at);
}

/** One line per cluster, for the bench's log. */
export function describeClusters(clusters: SlowCluster[], windowStart: number): string[] {
  const named = (p: Pause) =>
    `${p.service} ${p.what === "late" ? "loop late" : p.what === "gc 1" ? "minor GC" : p.what} ${p.ms.toFixed(0)} ms`;
  return clusters.map(
    (c) =>
      `+${((c.start - windowStart) / 1_000).toFixed(2)} s: ${c.requests} slow, worst ${c.worstMs.toFixed(0)} ms; ${c.pauses.length > 0 ? c.pauses.map(named).join(", ") : "no pause logged"}`,
  );
}

function lines(file: string): string[] {
  return fs
    .readFileSync(file, "utf8")
    .split("\n")
    .filter((l) => l.trim() !== "");
}
