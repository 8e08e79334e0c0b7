// The bench's load generator, run as its own process so that generating load does not share an
// event loop with what is measured (the public router lives in the bench's main process, as it
// lives in `npm start`'s supervisor). Reads one JSON job from argv[2]; prints JSON lines on
// stdout: {"mark":"start"} and {"mark":"end"} around the measured window, then {"result":…}.
//
// Jobs:
//   max     closed loop with autocannon (`connections` in flight) for `seconds`
//   rate    open loop at `rate` requests/s for `seconds` after `warmupSeconds` at that rate; with
//           `nats`, also submit → WORKFLOW_COMPLETED of the window's tasks
//   tasks   `inflight` virtual users, each submits a task and waits for its WORKFLOW_COMPLETED,
//           for `seconds` after a warm-up: completed tasks per second at saturation
import { randomUUID } from "node:crypto";
import { writeFileSync } from "node:fs";
import autocannon from "autocannon";
import { connect, type NatsConnection } from "@nats-io/transport-node";
import { Pool } from "undici";
import { lastEventTextOf } from "@tog/events";
import { pct } from "./lib/percentile.ts";

export interface LoadJob {
  mode: "max" | "rate" | "tasks";
  url: string;
  method?: "GET" | "POST";
  headers?: Record<string, string>;
  body?: string;
  seconds: number;
  /** A fresh Idempotency-Key header on every request. */
  idempotency?: boolean;
  connections?: number;
  rate?: number;
  inflight?: number;
  warmupSeconds?: number;
  /** Subscribe to `<prefix>.events.*` for WORKFLOW_COMPLETED. */
  nats?: { url: string; prefix: string };
  /** How long to wait for outstanding completions after the window. */
  drainSeconds?: number;
  /** rate: each request of the window as a line `<start, epoch ms> <latency ms>` (BENCH_PAUSES). */
  latencyFile?: string;
}

export interface LoadResult {
  requests: number;
  rps: number;
  p50: number;
  p99: number;
  non2xx: number;
  errors: number;
  /** rate mode: the window's answers that were not 2xx, by status. */
  statuses?: Record<string, number>;
  /** submit → WORKFLOW_COMPLETED (ms), tasks that completed. */
  completion?: { count: number; expected: number; p50: number; p99: number; perSecond?: number; total?: number };
}

const now = () => performance.timeOrigin + performance.now();
const emit = (o: unknown) => process.stdout.write(`${JSON.stringify(o)}\n`);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function headersOf(job: LoadJob): Record<string, string> {
  const h = { ...job.headers };
  if (job.idempotency) h["idempotency-key"] = randomUUID();
  return h;
}

const COMPLETED = Buffer.from('"WORKFLOW_COMPLETED"');

/** Completion times by workflow id, and waiters. */
class Completions {
  readonly at = new Map<string, number>();
  private readonly waiters = new Map<string, (t: number) => void>();
  completedInWindow = 0;
  windowOpen = false;
  private readonly nc: NatsConnection;
  constructor(nc: NatsConnection, prefix: string) {
    this.nc = nc;
    nc.subscribe(`${prefix}.events.*`, {
      callback: (_err, msg) => {
        // Only the terminal event is read: messages without it are skipped without decoding, so
        // the load client takes less of the cores the system under test runs on. It is the last
        // event of its message (docs/decisions.md "One message per write").
        if (Buffer.from(msg.data.buffer, msg.data.byteOffset, msg.data.byteLength).indexOf(COMPLETED) < 0) return;
        let event: { workflow_id?: string; type?: string };
        try {
          event = JSON.parse(lastEventTextOf(msg.string())) as typeof event;
        } catch {
          return;
        }
        if (event.type !== "WORKFLOW_COMPLETED" || !event.workflow_id) return;
        const t = now();
        if (this.windowOpen) this.completedInWindow++;
        this.at.set(event.workflow_id, t);
        const w = this.waiters.get(event.workflow_id);
        if (w) {
          this.waiters.delete(event.workflow_id);
          w(t);
        }
      },
    });
  }
  wait(id: string, timeoutMs: number): Promise<number | undefined> {
    const t = this.at.get(id);
    if (t !== undefined) return Promise.resolve(t);
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        this.waiters.delete(id);
        resolve(undefined);
      }, timeoutMs);
      this.waiters.set(id, (at) => {
        clearTimeout(timer);
        resolve(at);
      });
    });
  }
  async close() {
    await this.nc.drain().catch(() => undefined);
  }
}

/** One keep-alive pool per URL's origin, as undici's global dispatcher keeps (unlimited connections). */
const targets = new Map<string, { pool: Pool; path: string }>();

/**
 * One request through undici's dispatcher with a handler object: no promise, stream or body
 * mixin per request. In the open loop that took the client from ~280 to ~175 µs of CPU per
 * request against a bare server, CPU the system under test shares (docs/performance.md "How the
 * task bench measures").
 */
function submit(job: LoadJob): Promise<{ ok: boolean; t0: number; ms: number; id?: string; status: number }> {
  let target = targets.get(job.url);
  if (!target) {
    const url = new URL(job.url);
    target = { pool: new Pool(url.origin), path: url.pathname + url.search };
    targets.set(job.url, target);
  }
  const { pool, path } = target;
  const t0 = now();
  return new Promise((resolve) => {
    let status = 0;
    const chunks: Buffer[] = [];
    pool.dispatch(
      { path, method: job.method ?? "POST", headers: headersOf(job), body: job.body },
      {
        onRequestStart: () => undefined,
        onResponseStart: (_controller, statusCode) => void (status = statusCode),
        onResponseData: (_controller, chunk) => void chunks.push(chunk),
        onResponseEnd: () => {
          const ms = now() - t0;
          const ok = status >= 200 && status < 300;
          let id: string | undefined;
          if (ok && chunks.length > 0 && chunks[0]![0] === 0x7b) {
            try {
              id = (JSON.parse(Buffer.concat(chunks).toString()) as { task_id?: string }).task_id;
            } catch {
              // Not a task: counted as answered, without an id.
            }
          }
          resolve({ ok, t0, ms, id, status });
        },
        onResponseError: () => resolve({ ok: false, t0, ms: now() - t0, status: 0 }),
      },
    );
  });
}

async function runMax(job: LoadJob): Promise<LoadResult> {
  const options = (seconds: number): autocannon.Options => ({
    url: job.url,
    method: job.method ?? "GET",
    headers: job.headers,
    body: job.body,
    connections: job.connections ?? 64,
    duration: seconds,
    // A fresh Idempotency-Key per request; the request keeps its method and body.
    requests: job.idempotency
      ? [
          {
            method: job.method ?? "GET",
            body: job.body,
            setupRequest: (req) => ({ ...req, headers: { ...req.headers, "idempotency-key": randomUUID() } }),
          },
        ]
      : undefined,
  });
  // Warm-up (connections, JIT, pools, caches) outside the measured window.
  if ((job.warmupSeconds ?? 0) > 0) await autocannon(options(job.warmupSeconds!));
  emit({ mark: "start" });
  const result = await autocannon(options(job.seconds));
  emit({ mark: "end" });
  return {
    requests: result.requests.total,
    rps: result.requests.total / job.seconds,
    p50: result.latency.p50,
    p99: result.latency.p99,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}

async function runRate(job: LoadJob, completions?: Completions): Promise<LoadResult> {
  const rate = job.rate ?? 1;
  const interval = 1_000 / rate;
  // Warm-up at the same rate, straight into the window: the first requests of a fresh client
  // process (connections, its own JIT) took 70–180 ms and were a p99 of the client, not of the
  // system (docs/performance.md "How the task bench measures").
  const warmup: Promise<unknown>[] = [];
  const pending: Promise<Awaited<ReturnType<typeof submit>>>[] = [];
  let next = performance.now();
  const offer = async (into: Promise<unknown>[], until: number) => {
    while (next < until) {
      into.push(submit(job));
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await sleep(wait);
    }
  };
  await offer(warmup, next + (job.warmupSeconds ?? 0) * 1_000);
  emit({ mark: "start" });
  await offer(pending, next + job.seconds * 1_000);
  const results = await Promise.all(pending);
  emit({ mark: "end" });
  await Promise.all(warmup);
  if (job.latencyFile)
    writeFileSync(job.latencyFile, results.map((r) => `${r.t0.toFixed(1)} ${r.ms.toFixed(1)}\n`).join(""));
  const lat = results.map((r) => r.ms).sort((a, b) => a - b);
  const out: LoadResult = {
    requests: results.length,
    rps: results.length / job.seconds,
    p50: pct(lat, 50),
    p99: pct(lat, 99),
    non2xx: results.filter((r) => r.status !== 0 && !r.ok).length,
    errors: results.filter((r) => r.status === 0).length,
    statuses: statusCounts(results),
  };
  if (completions) {
    const ids = results.filter((r) => r.id);
    const done = await Promise.all(
      ids.map(async (r) => ({ r, at: await completions.wait(r.id!, (job.drainSeconds ?? 60) * 1_000) })),
    );
    const e2e = done
      .filter((d) => d.at !== undefined)
      .map((d) => d.at! - d.r.t0)
      .sort((a, b) => a - b);
    out.completion = { count: e2e.length, expected: results.length, p50: pct(e2e, 50), p99: pct(e2e, 99) };
  }
  return out;
}

function statusCounts(results: { ok: boolean; status: number }[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of results) if (r.status !== 0 && !r.ok) counts[r.status] = (counts[r.status] ?? 0) + 1;
  return counts;
}

async function runTasks(job: LoadJob, completions: Completions): Promise<LoadResult> {
  const inflight = job.inflight ?? 64;
  const warmupEnd = performance.now() + (job.warmupSeconds ?? 1) * 1_000;
  let windowStart = 0;
  let windowEnd = Infinity;
  let stop = false;
  const submits: number[] = [];
  const e2e: number[] = [];
  let non2xx = 0;
  let errors = 0;
  let requests = 0;
  const user = async () => {
    while (!stop) {
      const r = await submit(job);
      const inWindow = r.t0 >= windowStart && r.t0 < windowEnd && windowStart > 0;
      if (inWindow) {
        requests++;
        submits.push(r.ms);
      }
      if (!r.ok || !r.id) {
        if (inWindow) r.status === 0 ? errors++ : non2xx++;
        await sleep(50);
        continue;
      }
      const at = await completions.wait(r.id, (job.drainSeconds ?? 60) * 1_000);
      if (at !== undefined && inWindow) e2e.push(at - r.t0);
    }
  };
  const users = Array.from({ length: inflight }, user);
  // Warm-up: at least warmupSeconds, and until the pipeline is full (as many completions as
  // tasks in flight), so the window sees the steady state, not the first tasks' cold path.
  const warmupLimit = performance.now() + (job.drainSeconds ?? 60) * 1_000;
  while (performance.now() < warmupEnd || (completions.at.size < inflight && performance.now() < warmupLimit))
    await sleep(100);
  emit({ mark: "start" });
  completions.windowOpen = true;
  const t0 = performance.now();
  windowStart = now();
  await sleep(job.seconds * 1_000);
  completions.windowOpen = false;
  windowEnd = now();
  const secs = (performance.now() - t0) / 1_000;
  emit({ mark: "end" });
  stop = true;
  await Promise.race([Promise.all(users), sleep((job.drainSeconds ?? 60) * 1_000)]);
  submits.sort((a, b) => a - b);
  e2e.sort((a, b) => a - b);
  return {
    requests,
    rps: requests / secs,
    p50: pct(submits, 50),
    p99: pct(submits, 99),
    non2xx,
    errors,
    completion: {
      count: e2e.length,
      expected: requests,
      p50: pct(e2e, 50),
      p99: pct(e2e, 99),
      perSecond: completions.completedInWindow / secs,
      total: completions.at.size,
    },
  };
}

const job = JSON.parse(process.argv[2] ?? "{}") as LoadJob;
const completions = job.nats
  ? new Completions(await connect({ servers: job.nats.url, name: "bench-load" }), job.nats.prefix)
  : undefined;
let result: LoadResult;
if (job.mode === "max") result = await runMax(job);
else if (job.mode === "rate") result = await runRate(job, completions);
else {
  if (!completions) throw new Error("tasks job needs nats");
  result = await runTasks(job, completions);
}
await completions?.close();
emit({ result });
process.exit(0);
