import { execFile } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import http from "node:http";
import type { AddressInfo } from "node:net";
import { runLoad } from "../tasks/lib/load.ts";
import { pauseProbeEnv, readPauses, readRequests, slowClusters, type Pause, type Request } from "../tasks/lib/tail.ts";

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
    // The 100 ms block is one late wake-up of at least 80 ms; a busy machine may add short ones.
    const late = pauses.filter((p) => p.what === "late" && p.ms >= 80);
    expect(late.length).toBe(1);
    expect(Math.abs(late[0]!.at - Date.now())).toBeLessThan(60_000);
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
