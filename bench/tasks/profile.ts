// Profiling aid (docs/performance.md "Profiling"): starts the system on the machine's services
// with V8's CPU profiler in the chosen services, runs one load job, stops, and prints the
// self time per package/file and the top functions of each profile.
//   node bench/tasks/profile.ts submit|complete [seconds] [services,comma,separated]
import fs from "node:fs";
import path from "node:path";
import { spawn, type ChildProcess } from "node:child_process";
import { runLoad, type LoadJob } from "./lib/load.ts";
import { cpuDelta, snapshotCpu, type CpuSnapshot, type Sampled } from "./lib/proc.ts";

const [jobName = "submit", secondsArg = "8", which = "gateway,orchestrator,worker"] = process.argv.slice(2);
const services = which.split(",");
const dir = fs.mkdtempSync("/tmp/tog-prof-");
// PROFILE_STRACE=1: count system calls of the chosen services during the window instead.
const strace = process.env.PROFILE_STRACE === "1";
// PROFILE_CPU=1: only CPU ms per request of every service from /proc (no profiler overhead);
// PROFILE_RATE=<n>: an open loop at n requests/s instead of the closed loop (submit only).
const cpuOnly = process.env.PROFILE_CPU === "1";
// PROFILE_HEAP=1: what the chosen services allocate during the window (sampling heap profiler,
// collected objects included) instead of where their CPU goes; PROFILE_HEAP=promoted: only what
// outlived the young generation (objects freed by a minor collection left out).
const heap = process.env.PROFILE_HEAP === "1" || process.env.PROFILE_HEAP === "promoted";
const heapSampler = new URL("./lib/heap-sampler.ts", import.meta.url).href;
const rate = Number(process.env.PROFILE_RATE ?? 0);
const profiled =
  strace || cpuOnly
    ? {}
    : Object.fromEntries(
        services.map((s) => [
          s,
          heap
            ? {
                NODE_OPTIONS: `--import ${heapSampler}`,
                PROFILE_HEAP_DIR: `${dir}/${s}`,
                PROFILE_HEAP_PROMOTED: process.env.PROFILE_HEAP === "promoted" ? "1" : "0",
              }
            : { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${dir}/${s}` },
        ]),
      );
if (heap) for (const s of services) fs.mkdirSync(`${dir}/${s}`, { recursive: true });
const { startE2eEnvironment } = await import("@tog/tests-e2e");
const env = await startE2eEnvironment({
  env: {
    GATEWAY_SKIP_AUTH: "0",
    RATE_LIMIT_RPM: "100000000",
    RATE_LIMIT_BURST: "10000000",
    LOG_LEVEL: "warn",
    DATABASE_POOL_MAX: "16",
    ORCHESTRATOR_SUBMIT_BATCHES: process.env.ORCHESTRATOR_SUBMIT_BATCHES,
  },
  services: { ...profiled, worker: { ...profiled.worker, WORKER_CONCURRENCY: "128" } },
  replicas: { worker: jobName === "submit" ? 0 : 1 },
});
const { key } = await env.createApiKey({ name: "prof" });
const headers = { "content-type": "application/json", "x-api-key": key };
const body = JSON.stringify({ query: "Say hello", mode: "simple" });
const seconds = Number(secondsArg);
const tracers: ChildProcess[] = [];
let cpuBefore: CpuSnapshot = new Map();
let cpuAfter: CpuSnapshot = new Map();
const sampled = (): Sampled[] => env.stack.services.map((s) => ({ name: s.name, pid: s.pid }));
const hooks: { onStart?: () => void; onEnd?: () => void } = cpuOnly
  ? { onStart: () => void (cpuBefore = snapshotCpu(sampled())), onEnd: () => void (cpuAfter = snapshotCpu(sampled())) }
  : strace
    ? {
        onStart: () => {
          for (const svc of services) {
            const pid = env.service(svc).pid;
            tracers.push(
              spawn("strace", ["-c", "-f", "-p", String(pid), "-o", `${dir}/${svc}.strace`], { stdio: "ignore" }),
            );
          }
        },
        onEnd: () => {
          for (const t of tracers) t.kill("SIGINT");
        },
      }
    : heap
      ? {
          // The heap sampler starts at the first SIGUSR2 and writes its profile at the second.
          onStart: () => signalSamplers(),
          onEnd: () => signalSamplers(),
        }
      : {};
function signalSamplers(): void {
  for (const svc of services) process.kill(env.service(svc).pid, "SIGUSR2");
}
// Submits of a simple task; for tasks, completions are timed from the NATS events.
const request = { url: `${env.baseUrl}/tasks`, method: "POST" as const, headers, body, seconds };
const idempotency = process.env.PROFILE_NO_IDEM !== "1";
const tasks = { nats: { url: env.infra.natsUrl, prefix: env.natsPrefix }, drainSeconds: 30 };
const job: LoadJob =
  jobName === "submit"
    ? rate > 0
      ? { ...request, mode: "rate", idempotency, rate, warmupSeconds: 2 }
      : { ...request, mode: "max", idempotency, connections: 64, warmupSeconds: 2 }
    : rate > 0
      ? { ...request, ...tasks, mode: "rate", rate, warmupSeconds: 2 }
      : { ...request, ...tasks, mode: "tasks", inflight: 64, warmupSeconds: 2 };
// The load's window on the monotonic clock (µs), to keep start-up and shutdown out of the V8
// profiles below: their sample times are on the same clock (V8's TimeTicks and process.hrtime
// both read CLOCK_MONOTONIC on Linux).
const monotonicUs = () => Number(process.hrtime.bigint() / 1000n);
const window = { start: 0, end: 0 };
const result = await runLoad(job, {
  onStart: () => {
    window.start = monotonicUs();
    hooks.onStart?.();
  },
  onEnd: () => {
    window.end = monotonicUs();
    hooks.onEnd?.();
  },
});
console.log(`${jobName}: ${Math.round(result.rps)}/s, p50 ${result.p50} ms, p99 ${result.p99} ms`);
if (result.completion)
  console.log(`submit → WORKFLOW_COMPLETED p50 ${result.completion.p50} ms, p99 ${result.completion.p99} ms`);
if (jobName !== "submit") {
  // Where a task's time goes, from its own timestamps: queued (created → claimed) and run
  // (claimed → final write), in ms.
  const pg = (await import("pg")).default;
  const client = new pg.Client({ connectionString: env.database.url });
  await client.connect();
  const { rows } = await client.query(`
    SELECT stage, round(percentile_cont(0.5) WITHIN GROUP (ORDER BY ms)::numeric, 1) AS p50,
           round(percentile_cont(0.99) WITHIN GROUP (ORDER BY ms)::numeric, 1) AS p99
    FROM (SELECT 'queued' AS stage, extract(epoch FROM started_at - created_at) * 1000 AS ms FROM tasks WHERE completed_at IS NOT NULL
          UNION ALL SELECT 'run', extract(epoch FROM completed_at - started_at) * 1000 FROM tasks WHERE completed_at IS NOT NULL) x
    GROUP BY stage`);
  for (const r of rows) console.log(`${r.stage}: p50 ${r.p50} ms, p99 ${r.p99} ms`);
  // Each event of the run: when it was made (its timestamp) and when it was stored, from the claim.
  const events = await client.query(`
    SELECT e.seq, min(e.type) AS type,
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e."timestamp" - t.started_at) * 1000)::numeric, 1) AS made,
           round(percentile_cont(0.5) WITHIN GROUP (ORDER BY extract(epoch FROM e.stored_at - t.started_at) * 1000)::numeric, 1) AS stored,
           round(percentile_cont(0.99) WITHIN GROUP (ORDER BY extract(epoch FROM e."timestamp" - t.started_at) * 1000)::numeric, 1) AS made99
    FROM task_events e JOIN tasks t ON t.id = e.task_id WHERE t.completed_at IS NOT NULL GROUP BY e.seq ORDER BY e.seq`);
  for (const r of events.rows)
    console.log(
      `  seq ${r.seq} ${r.type}: made p50 +${r.made} ms (p99 +${r.made99}), stored p50 +${r.stored} ms after the claim`,
    );
  await client.end();
}
if (heap) {
  // The profiles are written just after the second signal: wait for them before stopping.
  const files = () => services.flatMap((svc) => fs.readdirSync(`${dir}/${svc}`));
  for (let i = 0; i < 50 && files().length < services.length; i++) await new Promise((r) => setTimeout(r, 100));
}
await env.close();
if (cpuOnly) {
  const done =
    jobName === "submit"
      ? result.requests - result.non2xx - result.errors
      : result.completion?.perSecond !== undefined
        ? Math.round(result.completion.perSecond * seconds)
        : (result.completion?.count ?? 0);
  for (const [name, ms] of cpuDelta(cpuBefore, cpuAfter))
    console.log(
      `${name.padEnd(16)} ${(ms / Math.max(1, done)).toFixed(3)} ms CPU per ${jobName === "submit" ? "accepted submit" : "completed task"}`,
    );
  process.exit(0);
}
if (strace) {
  for (const svc of services)
    console.log(
      `\n== ${svc}: system calls in the window (${result.requests} requests)\n${fs.readFileSync(`${dir}/${svc}.strace`, "utf8").split("\n").slice(0, 14).join("\n")}`,
    );
  process.exit(0);
}

/** Package (or the project's file) a profile's call frame belongs to. */
function groupOf(frame: { functionName: string; url: string }): string {
  const url = frame.url;
  const m = url.match(/node_modules\/((?:@[^/]+\/)?[^/]+)/);
  if (frame.functionName === "(idle)") return "(idle)";
  if (m) return m[1]!;
  if (url.startsWith("node:")) return url;
  if (url.includes("/work/")) return url.replace(/.*\/(libs|services)\//, "$1/");
  return frame.functionName || "(native)";
}
const frameName = (f: { functionName: string; url: string; lineNumber: number }) =>
  `${f.functionName || "(anon)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber}`;
const top = (m: Map<string, number>, total: number, n: number) =>
  [...m]
    .filter(([k]) => k !== "(idle)")
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `  ${((100 * v) / total).toFixed(1).padStart(5)}%  ${k}`)
    .join("\n");

if (heap) {
  interface HeapNode {
    callFrame: { functionName: string; url: string; lineNumber: number };
    selfSize: number;
    children: HeapNode[];
  }
  for (const svc of services) {
    for (const file of fs.readdirSync(path.join(dir, svc))) {
      const { head } = JSON.parse(fs.readFileSync(path.join(dir, svc, file), "utf8")) as { head: HeapNode };
      const groups = new Map<string, number>();
      const fns = new Map<string, number>();
      let total = 0;
      const walk = (n: HeapNode) => {
        total += n.selfSize;
        const g = groupOf(n.callFrame);
        groups.set(g, (groups.get(g) ?? 0) + n.selfSize);
        const f = frameName(n.callFrame);
        fns.set(f, (fns.get(f) ?? 0) + n.selfSize);
        for (const c of n.children) walk(c);
      };
      walk(head);
      const accepted = Math.max(1, result.requests - result.non2xx - result.errors);
      console.log(
        `\n== ${svc} (${file}): ${(total / 1e6).toFixed(1)} MB allocated in the window, ${(total / accepted / 1024).toFixed(1)} KB per request`,
      );
      console.log(`-- by package/file\n${top(groups, total, 25)}\n-- functions\n${top(fns, total, 30)}`);
    }
  }
  process.exit(0);
}

interface Node {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  hitCount: number;
  children?: number[];
}
console.log(`profiles in ${dir}; load window ${window.start}–${window.end} µs (monotonic)`);
for (const svc of fs.readdirSync(dir)) {
  for (const file of fs.readdirSync(path.join(dir, svc))) {
    const prof = JSON.parse(fs.readFileSync(path.join(dir, svc, file), "utf8")) as {
      nodes: Node[];
      samples: number[];
      timeDeltas: number[];
      startTime: number;
    };
    const self = new Map<number, number>();
    let at = prof.startTime;
    prof.samples.forEach((id, i) => {
      const delta = prof.timeDeltas[i] ?? 0;
      at += delta;
      if (at >= window.start && at <= window.end) self.set(id, (self.get(id) ?? 0) + delta);
    });
    const byNode = new Map(prof.nodes.map((n) => [n.id, n]));
    const total = [...self.values()].reduce((a, b) => a + b, 0);
    const groups = new Map<string, number>();
    const fns = new Map<string, number>();
    for (const [id, us] of self) {
      const n = byNode.get(id)!;
      const group = groupOf(n.callFrame);
      groups.set(group, (groups.get(group) ?? 0) + us);
      const fn = frameName(n.callFrame);
      fns.set(fn, (fns.get(fn) ?? 0) + us);
    }
    const busy = total - (groups.get("(idle)") ?? 0);
    console.log(
      `\n== ${svc} (${file}): busy ${(busy / 1e6).toFixed(2)} s of ${(total / 1e6).toFixed(2)} s, ${(busy / Math.max(1, result.requests) / 1000).toFixed(3)} ms/request`,
    );
    console.log(`-- by package/file\n${top(groups, busy, 25)}\n-- functions\n${top(fns, busy, 25)}`);
  }
}
process.exit(0);
