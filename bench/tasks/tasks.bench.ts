// Issue 3 design targets, measured against the whole system on this machine (every service as its
// own process behind the router, PostgreSQL/NATS/Redis local), with a baseline in the same run:
//   A. baseline: an express route doing one PostgreSQL INSERT
//   B. POST /api/v1/tasks with auth and an Idempotency-Key: throughput and latency
//   C. a simple task on the offline provider, submit → WORKFLOW_COMPLETED, at a fixed rate
//   D. completed tasks per second, sustained, at saturation
// Run: npm run bench:tasks  (BENCH_SECONDS, BENCH_RATE, BENCH_WORKERS to change the load)
import { randomUUID } from "node:crypto";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import express from "express";
import pg from "pg";
import { connectBus } from "@tog/bus";
import { createLogger, envInt, loadConfig } from "@tog/core";
import { startE2eEnvironment } from "@tog/tests-e2e";
import { createTestDatabase } from "@tog/testkit";

const config = loadConfig({
  BENCH_SECONDS: envInt(10, 1).describe("Duration of each load phase."),
  BENCH_RATE: envInt(200, 1).describe("Submissions per second in the latency phase (C)."),
  BENCH_CONNECTIONS: envInt(64, 1).describe("Concurrent HTTP connections in the throughput phases."),
  BENCH_WORKERS: envInt(2, 1).describe("Worker processes."),
});
const logger = createLogger({ service: "bench", level: "warn" });

const pct = (sorted: number[], p: number) => sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN;
const fmt = (n: number) => (Number.isFinite(n) ? n.toFixed(n < 10 ? 2 : 0) : "-");
const rows: string[][] = [];
const report = (name: string, rate: string, p50: number, p99: number, note = "") => rows.push([name, rate, fmt(p50), fmt(p99), note]);

async function baseline(): Promise<void> {
  const database = await createTestDatabase({ migrated: false });
  const pool = new pg.Pool({ connectionString: database.url, max: 16 });
  pool.on("error", () => undefined);
  await pool.query("CREATE TABLE items (id uuid PRIMARY KEY, body jsonb NOT NULL, created_at timestamptz NOT NULL DEFAULT now())");
  const app = express();
  app.use(express.json());
  app.post("/items", async (req, res) => {
    const id = randomUUID();
    await pool.query("INSERT INTO items (id, body) VALUES ($1, $2)", [id, req.body]);
    res.json({ id });
  });
  const server = app.listen(0, "127.0.0.1");
  await new Promise((r) => server.once("listening", r));
  const port = (server.address() as AddressInfo).port;
  const result = await autocannon({
    url: `http://127.0.0.1:${port}/items`,
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ query: "hello" }),
    connections: config.BENCH_CONNECTIONS,
    duration: config.BENCH_SECONDS,
  });
  report("A. baseline: express + 1 PG insert", `${fmt(result.requests.average)}/s`, result.latency.p50, result.latency.p99, `${result.non2xx} non-2xx`);
  server.close();
  await pool.end();
  await database.drop();
}

async function system(): Promise<void> {
  const env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000000", RATE_LIMIT_BURST: "10000000", LOG_LEVEL: "warn", DATABASE_POOL_MAX: "16" },
    services: {
      worker: { WORKER_CONCURRENCY: "128", ...(process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}/worker` } : {}) },
      gateway: process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}/gateway` } : {},
      orchestrator: process.env.BENCH_PROFILE ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${process.env.BENCH_PROFILE}/orchestrator` } : {},
    },
    replicas: { worker: config.BENCH_WORKERS },
  });
  try {
    const { key } = await env.createApiKey({ name: "bench" });
    // The gateway itself: in production an Ingress (nginx) is in front, not the dev router.
    const api = `${env.service("gateway").url}/api/v1`;
    const bus = await connectBus({ url: env.env.NATS_URL!, name: "bench", prefix: env.natsPrefix, logger });
    const submittedAt = new Map<string, number>();
    const latencies: number[] = [];
    let completed = 0;
    const sub = bus.nc.subscribe(`${env.natsPrefix}.events.*`, {
      callback: (_err, msg) => {
        const event = msg.json<{ workflow_id: string; type: string }>();
        if (event.type !== "WORKFLOW_COMPLETED") return;
        completed++;
        const t0 = submittedAt.get(event.workflow_id);
        if (t0 !== undefined) latencies.push(performance.now() - t0);
      },
    });
    const headers = { "content-type": "application/json", "x-api-key": key };
    const body = JSON.stringify({ query: "Say hello", mode: "simple" });

    // B: submissions with an Idempotency-Key each, as fast as they go.
    const b = await autocannon({
      url: `${api}/tasks`,
      method: "POST",
      headers,
      body,
      connections: config.BENCH_CONNECTIONS,
      duration: config.BENCH_SECONDS,
      requests: [{ setupRequest: (req) => ({ ...req, headers: { ...headers, "idempotency-key": randomUUID() } }) }],
    });
    report("B. POST /tasks (auth + Idempotency-Key)", `${fmt(b.requests.average)}/s`, b.latency.p50, b.latency.p99, `${b.non2xx} non-2xx`);

    // Let the backlog drain before measuring latency.
    const drainEnd = Date.now() + 120_000;
    let last = -1;
    while (Date.now() < drainEnd) {
      await new Promise((r) => setTimeout(r, 1_000));
      if (completed === last) break;
      last = completed;
    }

    // C: fixed rate, submit → WORKFLOW_COMPLETED.
    latencies.length = 0;
    const interval = 1_000 / config.BENCH_RATE;
    const end = performance.now() + config.BENCH_SECONDS * 1_000;
    const pending: Promise<unknown>[] = [];
    let next = performance.now();
    while (performance.now() < end) {
      const t0 = performance.now();
      pending.push(
        fetch(`${api}/tasks`, { method: "POST", headers, body })
          .then((r) => r.json() as Promise<{ task_id: string }>)
          .then((r) => submittedAt.set(r.task_id, t0)),
      );
      next += interval;
      const wait = next - performance.now();
      if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    }
    await Promise.all(pending);
    const expected = pending.length;
    const waitEnd = Date.now() + 60_000;
    while (latencies.length < expected && Date.now() < waitEnd) await new Promise((r) => setTimeout(r, 100));
    const sorted = [...latencies].sort((x, y) => x - y);
    report(
      `C. simple task submit → WORKFLOW_COMPLETED @ ${config.BENCH_RATE}/s`,
      `${fmt(expected / config.BENCH_SECONDS)}/s`,
      pct(sorted, 50),
      pct(sorted, 99),
      `${latencies.length}/${expected} completed`,
    );

    // D: saturation: submit as fast as possible, count completions over the window.
    const startCompleted = completed;
    const t0 = performance.now();
    const d = await autocannon({ url: `${api}/tasks`, method: "POST", headers, body, connections: config.BENCH_CONNECTIONS, duration: config.BENCH_SECONDS });
    const secs = (performance.now() - t0) / 1_000;
    report("D. completed tasks/s at saturation", `${fmt((completed - startCompleted) / secs)}/s`, NaN, NaN, `${fmt(d.requests.average)}/s submitted`);
    sub.unsubscribe();
    await bus.close();
  } finally {
    await env.close().catch(() => undefined);
  }
}

await baseline();
await system();
const header = ["measurement", "rate", "p50 ms", "p99 ms", "note"];
const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
const line = (cells: string[]) => `| ${cells.map((c, i) => c.padEnd(widths[i]!)).join(" | ")} |`;
console.log([line(header), line(widths.map((w) => "-".repeat(w))), ...rows.map(line)].join("\n"));
process.exit(0);
