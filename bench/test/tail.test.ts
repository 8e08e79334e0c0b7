import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { runLoad } from "../tasks/lib/load.ts";
import {
  describeClusters,
  pauseProbeEnv,
  readPauses,
  readPostgresPauses,
  readRequests,
  slowClusters,
  type Pause,
  type Request,
} from "../tasks/lib/tail.ts";

describe("slowClusters", () => {
  // 400 requests of 10 ms, one every 20 ms; two bursts of slow ones (1.5 % of the window, so the
  // p99 is one of them): at 2 s, held back by a minor GC that began just before, and at 6 s,
  // with nothing logged.
  const requests: Request[] = Array.from({ length: 400 }, (_, i) => ({ start: i * 20, ms: 10 }));
  for (const i of [100, 101, 102, 103]) requests[i]!.ms = 80 - (i - 100) * 10;
  for (const i of [300, 301]) requests[i]!.ms = 70;
  const pauses: Pause[] = [
    { service: "gateway", at: 1_980, what: "gc 1", ms: 45 },
    { service: "gateway", at: 1_990, what: "late", ms: 3 },
    { service: "orchestrator", at: 4_000, what: "gc 1", ms: 30 },
  ];

  it("groups the slow requests and names the pauses each group met", () => {
    const clusters = slowClusters(requests, pauses);
    expect(clusters.map((c) => [c.start, c.requests, c.worstMs])).toEqual([
      [2_000, 4, 80],
      [6_000, 2, 70],
    ]);
    // The short late wake-up is below the threshold; the orchestrator's GC met no slow request.
    expect(clusters[0]!.pauses).toEqual([pauses[0]]);
    expect(clusters[1]!.pauses).toEqual([]);
  });

  it("finds nothing in an empty window", () => {
    expect(slowClusters([], pauses)).toEqual([]);
  });

  it("a long pause that began well before a cluster and was still going counts, a late loop by its end", () => {
    // An autovacuum from 1.5 s to 2.1 s overlaps the 2 s cluster; one that ended at 1.9 s does not.
    const vacuums: Pause[] = [
      { service: "postgres", at: 1_500, what: "autovacuum analyze task_steps", ms: 600 },
      { service: "postgres", at: 1_000, what: "autovacuum vacuum tasks", ms: 900 },
    ];
    // A late wake-up is logged at its end: one that ended 70 ms before the cluster began is too early.
    const lates: Pause[] = [
      { service: "gateway", at: 1_930, what: "late", ms: 40 },
      { service: "gateway", at: 1_960, what: "late", ms: 40 },
    ];
    expect(slowClusters(requests, lates)[0]!.pauses).toEqual([lates[1]]);
    const clusters = slowClusters(requests, vacuums);
    expect(clusters[0]!.pauses).toEqual([vacuums[0]]);
    expect(describeClusters(clusters, 0)[0]).toBe(
      "+2.00 s: 4 slow, worst 80 ms; postgres autovacuum analyze task_steps 600 ms",
    );
  });
});

describe("readPostgresPauses", () => {
  it("reads slow statements and autovacuums from the log, each from when it began", () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tog-pg-log-"));
    const file = path.join(dir, "postgres.log");
    // The shape `log_line_prefix = '%n [%p] '` gives; PostgreSQL logs each when it ends.
    fs.writeFileSync(
      file,
      [
        "1795950770.728 [16314] LOG:  duration: 102.112 ms  statement: COMMIT",
        "1795950765.050 [16371] LOG:  duration: 58.401 ms  execute final-write: WITH s AS (",
        "\t  SELECT 1",
        "1795950765.051 [16371] DETAIL:  parameters: $1 = '1'",
        '1795950768.258 [16372] LOG:  automatic analyze of table "togtest_x.public.task_events"',
        "\tavg read rate: 16.685 MB/s, avg write rate: 0.249 MB/s",
        "\tsystem usage: CPU: user: 0.15 s, system: 0.00 s, elapsed: 0.37 s",
        "1795950771.000 [16100] LOG:  checkpoint starting: wal",
        "1795950772.500 [16374] LOG:  duration: 25.000 ms  statement: SELECT stage, percentile_cont(0.5) FROM x",
        "",
      ].join("\n"),
    );
    expect(readPostgresPauses(file)).toEqual([
      { service: "postgres", at: 1795950765050 - 58.401, what: "execute final-write", ms: 58.401 },
      { service: "postgres", at: 1795950768258 - 370, what: "autovacuum analyze task_events", ms: 370 },
      { service: "postgres", at: 1795950770728 - 102.112, what: "COMMIT", ms: 102.112 },
      { service: "postgres", at: 1795950772500 - 25, what: "SELECT stage, percentile_cont(0.5)", ms: 25 },
    ]);
    expect(readPostgresPauses(path.join(dir, "missing.log"))).toEqual([]);
  });
});

describe("pause probe", () => {
  it("logs a process's garbage collections and a blocked event loop, by service and pid", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tog-pause-probe-"));
    const entry = path.join(dir, "services", "demo", "src", "main.mjs");
    const worker = path.join(dir, "services", "demo", "src", "worker.mjs");
    fs.mkdirSync(path.dirname(entry), { recursive: true });
    // A full GC, then the loop blocked for 100 ms, then a turn for the probe's timer to notice.
    fs.writeFileSync(
      entry,
      "globalThis.gc(); setTimeout(() => { const t = Date.now(); while (Date.now() - t < 100); setTimeout(() => {}, 50); }, 50);",
    );
    fs.copyFileSync(entry, worker);
    const env = { PATH: process.env.PATH, ...pauseProbeEnv(dir) };
    await Promise.all([entry, worker].map((e) => promisify(execFile)(process.execPath, ["--expose-gc", e], { env })));
    // A service's main.ts is named by its folder, another entry (the orchestrator's worker.ts) by its file.
    expect(new Set(readPauses(dir).map((p) => p.service))).toEqual(new Set(["demo", "worker"]));
    const pauses = readPauses(dir).filter((p) => p.service === "demo");
    expect(pauses.some((p) => p.what.startsWith("gc "))).toBe(true);
    // The 100 ms block is a late wake-up of at least 80 ms. A loaded host (CI runs files in
    // parallel) can stall the process as long once more, so this asks for the block, not a count.
    const late = pauses.filter((p) => p.what === "late" && p.ms >= 80);
    expect(late.length).toBeGreaterThanOrEqual(1);
    for (const p of late) expect(Math.abs(p.at - Date.now())).toBeLessThan(60_000);
  });
});

describe("a rate job with a latency file", () => {
  it("writes each request of the window and logs the load client's own pauses beside them", async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), "tog-load-pauses-"));
    const server = http.createServer((_req, res) => res.end("{}"));
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    try {
      const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/`;
      const latencyFile = path.join(dir, "job.requests");
      const result = await runLoad({
        mode: "rate",
        url,
        method: "GET",
        rate: 50,
        seconds: 1,
        warmupSeconds: 0,
        latencyFile,
      });
      const requests = readRequests(latencyFile);
      expect(requests.length).toBe(result.requests);
      expect(requests.every((r) => r.ms > 0 && Math.abs(r.start - Date.now()) < 60_000)).toBe(true);
      // The client's probe log exists even when it logged nothing (a short run may not collect).
      expect(fs.readdirSync(dir).some((f) => /^load-client-\d+\.log$/.test(f))).toBe(true);
    } finally {
      server.close();
    }
  });
});
