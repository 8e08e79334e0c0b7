// The task bench: every target of issue 10 ("What to reach") measured side by side in one run,
// against a PostgreSQL configured like production (the bench's own instance, autovacuum on) or,
// with BENCH_PG=machine, the machine's shared one. docs/performance.md ("How the task bench
// measures") says what each row means. Prints one markdown table of targets (plus CPU and
// PostgreSQL cost tables) and writes it, with the raw figures as JSON, to bench/results/.
//
// Phases (BENCH_PHASES, in this order):
//   baseline    bare express process: POST /items (one INSERT), POST /api/v1/auth/token (no stack)
//   submit      the system without workers: POST /tasks through the public port, max then half rate
//   port        GET /health through the router vs straight at the gateway; the gateway's token
//               route vs the bare one
//   completion  the system with workers: completed tasks/s at saturation, then latency at half
//               that rate; CPU per process and PostgreSQL rows per task
//   history     fresh user vs a user seeded (SQL, in bulk) with 100,000 tasks in 100,000 sessions
//               and a 1,000-turn session: PostgreSQL commits, tuples read and latency per endpoint
//   churn       (with history) 100,000 tasks' row life cycle written through SQL with autovacuum
//               off for those tables, then submit+run and GET /tasks again: cost after vs before
//
// Run: npm run bench:tasks   (BENCH_SECONDS=3 for a smoke run; BENCH_PG=machine for the shared instance)
import { execFileSync } from "node:child_process";
import fs from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { z } from "zod";
import { envBoolean, envInt, envList, loadConfig } from "@tog/core";
import { lastEventTextOf } from "@tog/events";
import { resolveRouterKind, startService, workerLayout, type RunningService } from "@tog/devstack";
import { runLoad, type LoadJob, type LoadResult } from "./lib/load.ts";
import { alternateLoads, type ControlledLatency, hostAdjusted } from "./lib/alternate.ts";
import { postgresBinDir, startPrivatePostgres, type PrivatePostgres } from "./lib/postgres.ts";
import {
  PgStats,
  diffDb,
  diffStatements,
  diffWal,
  minus,
  tableCounters,
  type DbCounters,
  type TableCounters,
  type WalCounters,
} from "./lib/pg-stats.ts";
import {
  cpuDelta,
  machineTimes,
  pidListeningOn,
  snapshotCpu,
  stealShare,
  busyShare,
  type CpuSnapshot,
  type Sampled,
} from "./lib/proc.ts";
import { natsDelta, natsSnapshot, type NatsCounts, type NatsSnapshot } from "./lib/nats-stats.ts";
import { startFlushProbe, type FlushProbe, type FlushStats } from "./lib/flush-probe.ts";
import { writebackDueSeconds } from "./lib/writeback.ts";
import { fmt, markdownTable, ratioOf, targetsTable, writeResults, type TargetRow } from "./lib/report.ts";
import { seedHistory, type SeedResult } from "./lib/seed.ts";
import { churn, churnedTables, restoreAutovacuum } from "./lib/churn.ts";
import {
  describeClusters,
  pauseProbeEnv,
  readPauses,
  readPostgresPauses,
  readRequests,
  slowClusters,
} from "./lib/tail.ts";

const HERE = path.dirname(fileURLToPath(import.meta.url));
const PHASES = ["baseline", "submit", "port", "completion", "history", "churn"] as const;

const config = loadConfig({
  BENCH_SECONDS: envInt(10, 1).describe("Length of each measured load window (s)."),
  BENCH_WARMUP_SECONDS: envInt(2, 0).describe("Warm-up before each measured window (s), at its load."),
  BENCH_LATENCY_WARMUP_SECONDS: envInt(writebackDueSeconds(), 0).describe(
    'Warm-up at the rate before each latency window (1b, 2b), in seconds. Default: the kernel\'s periodic write-back delay (vm.dirty_expire_centisecs + vm.dirty_writeback_centisecs) + 5 s, so the pages the saturation phase before left dirty reach the disk before the window opens, and the window meets the write-back of its own rate (docs/performance.md "Latency windows after a saturation phase").',
  ),
  BENCH_PORT_ROUNDS: envInt(4, 1).describe(
    "Row 4a: rounds of GET /health through the router and straight at the gateway, in turn; each round lasts 2 × BENCH_SECONDS / rounds.",
  ),
  BENCH_CONNECTIONS: envInt(64, 1).describe("Connections of the closed-loop HTTP phases."),
  BENCH_INFLIGHT: envInt(128, 1).describe("Tasks in flight in the completion saturation phase."),
  BENCH_WORKERS: envInt(0, 0).describe(
    'Worker processes running tasks; 0: the orchestrator runs them itself, as npm start does (docs/performance.md "Worker processes").',
  ),
  BENCH_ROUTER: z
    .enum(["auto", "nginx", "node"])
    .default("auto")
    .describe("The public router in front of the system, as `npm start` picks it (PUBLIC_ROUTER)."),
  BENCH_PG: z
    .enum(["private", "machine"])
    .default("private")
    .describe("private: the bench's own PostgreSQL (autovacuum on); machine: TEST_DATABASE_ADMIN_URL's."),
  BENCH_NATS: z
    .enum(["private", "machine"])
    .default("private")
    .describe(
      "private: the bench's own nats-server with its monitoring port, so messages per task are counted; machine: TEST_NATS_URL's (not counted).",
    ),
  BENCH_PG_BIN: z
    .string()
    .optional()
    .describe("Directory of initdb/pg_ctl (default: newest /usr/lib/postgresql/<v>/bin)."),
  BENCH_PHASES: envList([...PHASES]).describe(
    "Phases to run: baseline,submit,port,completion,history,churn (churn runs inside history).",
  ),
  BENCH_CHURN_TASKS: envInt(100_000, 1).describe(
    "Tasks whose row life cycle the churn phase writes (no vacuum in between).",
  ),
  BENCH_QUIET_MS: envInt(11_000, 0).describe(
    "Quiet wait before each PostgreSQL statistics read (PG 15 flushes idle backends' counters after ~10 s).",
  ),
  BENCH_HISTORY_REPS: envInt(100, 1).describe(
    "Requests per endpoint and user in each counter window of the history phase: the more, the less the services' background work (subtracted as a rate) weighs on each request's tuples.",
  ),
  BENCH_HISTORY_KEYS: envInt(8, 1).describe(
    "API keys per user in the history phase, used in turn, so GET /tasks' per-key limit (100/min) does not pace the counter windows.",
  ),
  BENCH_PG_SETTINGS: z
    .string()
    .default("")
    .describe(
      "With the bench's own PostgreSQL: more postgresql.conf settings, `name=value` separated by semicolons (they follow and override the bench's own).",
    ),
  BENCH_PG_READY_WAL: envBoolean(true).describe(
    "With the bench's own PostgreSQL: make its next WAL segments before each phase, as a server that has run a while has them (false: a fresh instance creates each one while commits wait).",
  ),
  BENCH_PG_STATEMENTS: envBoolean(false).describe(
    "Profiling: load pg_stat_statements in the bench's own PostgreSQL and log each history window's statements per request or task.",
  ),
  BENCH_HISTORY_TASKS: envInt(100, 1).describe(
    "Tasks per submit+run measurement in the history phase: the more, the less a periodic job of the services that falls into one window weighs on each task.",
  ),
  BENCH_PAUSES: envBoolean(false).describe(
    "Diagnosis: every service logs its garbage collections and late event-loop wake-ups, the bench's own PostgreSQL its statements of 20 ms or more and its autovacuums, and the log lists, for 1b and the 2b window, each cluster of slow requests with the pauses it met.",
  ),
  BENCH_SEED_SESSIONS: envInt(100_000, 1).describe("Earlier tasks (one session each) of the seeded user."),
  BENCH_SEED_TURNS: envInt(1_000, 1).describe("Turns of the seeded user's long session."),
  BENCH_RESULTS_DIR: z
    .string()
    .default(path.join(HERE, "..", "results"))
    .describe("Where the results are written."),
});
const phases = new Set(config.BENCH_PHASES);
for (const p of phases)
  if (!(PHASES as readonly string[]).includes(p)) throw new Error(`unknown phase ${p} (known: ${PHASES.join(", ")})`);

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const log = (msg: string) => process.stderr.write(`[bench ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
const quiet = () => sleep(config.BENCH_QUIET_MS);
const portOf = (url: string) => Number(new URL(url).port);

/** Everything started is stopped in reverse order, also on Ctrl-C. */
const cleanups: { name: string; run: () => Promise<unknown> }[] = [];
async function cleanup(): Promise<void> {
  while (cleanups.length > 0) {
    const c = cleanups.pop()!;
    try {
      await c.run();
    } catch (err) {
      log(`cleanup ${c.name} failed: ${(err as Error).message}`);
    }
  }
}
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.once(signal, () => {
    log(`${signal}: cleaning up`);
    void cleanup().finally(() => process.exit(130));
  });
}

// ---------------------------------------------------------------------------------------------
// Measurements, filled in by the phases.
const m: {
  baselineInsert?: LoadResult;
  /** The express + INSERT maximum again, right after the completion phase (the system stopped). */
  baselineInsertAfter?: LoadResult;
  bareToken?: LoadResult;
  submitMax?: LoadResult;
  submitHalf?: LoadResult;
  healthRouter?: LoadResult;
  healthDirect?: LoadResult;
  gatewayToken?: LoadResult;
  completionMax?: LoadResult;
  completionHalf?: LoadResult;
  /** Where the half-rate window's tasks spent their time, from their own timestamps (ms). */
  completionHalfStages?: Record<string, { p50: number; p99: number }>;
  cpuSubmit?: Record<string, number>;
  /** CPU per accepted submit in the 1b window, and how busy the cores were then. */
  cpuSubmitHalf?: Record<string, number>;
  busySubmitHalf?: Busy;
  cpuCompletion?: Record<string, number>;
  /** CPU per completed task at half the saturation rate (the 2b window), and how busy the cores were then. */
  cpuHalf?: Record<string, number>;
  busyHalf?: Busy;
  /** The disk's flush latency in the 1b and the 2b window (lib/flush-probe.ts). */
  flushSubmitHalf?: FlushStats;
  flushHalf?: FlushStats;
  /** The instance's WAL over the 2b window (bench's own PostgreSQL only) and the tasks submitted in it. */
  walHalf?: { tasks: number; wal: WalCounters };
  /** Share of the machine's time the hypervisor stole in the 2a window. */
  stealCompletion?: number;
  /**
   * The bare express + INSERT process's CPU per request (server + PostgreSQL) at its maximum and
   * at the 2b rate (after the system stopped): how much of the rise from saturation to 2b is the
   * machine's own cost of a request that arrives alone.
   */
  cpuBaselineMax?: Record<string, number>;
  /** The 2b rate (tasks/s offered). */
  halfRate?: number;
  baselineHalf?: LoadResult;
  cpuBaselineHalf?: Record<string, number>;
  /** NATS messages per accepted submit / per completed task, by client connection. */
  natsSubmit?: Record<string, NatsCounts>;
  natsCompletion?: Record<string, NatsCounts>;
  /** `wal`: the whole instance's, only with the bench's own PostgreSQL (nothing else writes there). */
  pgCompletion?: { tasks: number; db: DbCounters; tables: TableCounters; wal?: WalCounters };
  seed?: SeedResult & { sessions: number; turns: number };
  history?: HistoryRow[];
  historyNoise?: DbCounters;
  totalCount?: { api: number; sql: number };
  submitCreated?: { accepted: number; tasks: number };
  historyRateLimited?: number;
  churn?: {
    /** `p50`: the alternating pass's probe; after the churn with the host's drift taken out (`hostAdjusted`). */
    before: Cost[];
    after: Cost[];
    latency: { before: ControlledLatency[]; after: ControlledLatency[] };
    names: string[];
    ms: number;
    tasks: number;
    tables: Awaited<ReturnType<typeof churnedTables>>;
  };
} = {};

interface HistoryRow {
  name: string;
  fresh: Cost;
  seeded: Cost;
}
interface Cost {
  commits: number;
  tuples: number;
  /** Tuples read from the project's own tables and indexes (pg-stats.ts `ownTuples`). */
  ownTuples: number;
  p50: number;
  samples: number;
}

// ---------------------------------------------------------------------------------------------
// PostgreSQL: the bench's own, or the machine's. The test kit reads TEST_DATABASE_ADMIN_URL when
// first imported, so it (and the e2e harness, which imports it) is imported only after this.
let privatePg: PrivatePostgres | undefined;
/** BENCH_PAUSES: the bench's own PostgreSQL logs statements at least this slow, for logTail. */
const SLOW_STATEMENT_MS = 20;
if (config.BENCH_PG === "private") {
  log("starting the bench's own PostgreSQL (autovacuum on)");
  privatePg = await startPrivatePostgres({
    binDir: postgresBinDir(config.BENCH_PG_BIN),
    maxConnections: 300,
    statements: config.BENCH_PG_STATEMENTS,
    slowStatementsMs: config.BENCH_PAUSES ? SLOW_STATEMENT_MS : undefined,
    settings: config.BENCH_PG_SETTINGS.split(";")
      .map((x) => x.trim())
      .filter(Boolean),
  });
  cleanups.push({ name: "private PostgreSQL", run: () => privatePg!.stop() });
  process.env.TEST_DATABASE_ADMIN_URL = privatePg.adminUrl;
  await readyWal();
}

/** The bench's own PostgreSQL: its next WAL segments made before a phase (BENCH_PG_READY_WAL). */
async function readyWal(): Promise<void> {
  if (!privatePg || !config.BENCH_PG_READY_WAL) return;
  log(`  WAL: ${await privatePg.readyWal()} segments made ahead`);
}
// NATS likewise: the bench's own server, whose monitoring port counts each client's messages.
let natsMonitor: string | undefined;
if (config.BENCH_NATS === "private") {
  const { ownServersDir, startOwnNats } = await import("@tog/tests-e2e/own-servers");
  const dir = ownServersDir("tog-bench-nats");
  try {
    const nats = await startOwnNats(dir.dir);
    cleanups.push({ name: "private NATS", run: () => nats.stopAll().finally(() => dir.remove()) });
    process.env.TEST_NATS_URL = nats.url;
    natsMonitor = nats.monitorUrls[0];
  } catch (err) {
    // Not yet inside the run's try/finally: stop the private PostgreSQL started above (a
    // nats-server that lost its port to another socket once left it running).
    dir.remove();
    await cleanup();
    throw err;
  }
}
const { startE2eEnvironment } = await import("@tog/tests-e2e");
const testkit = await import("@tog/testkit");
type Env = Awaited<ReturnType<typeof startE2eEnvironment>>;
const adminUrl = testkit.testInfraConfig.TEST_DATABASE_ADMIN_URL;
const pgPid = privatePg ? await privatePg.pid() : pidListeningOn(portOf(adminUrl));
const natsPid = pidListeningOn(portOf(testkit.testInfraConfig.TEST_NATS_URL.replace(/^nats:/, "http:")));
const redisPid = pidListeningOn(portOf(testkit.testInfraConfig.TEST_REDIS_URL.replace(/^redis:/, "http:")));
const settingsClient = await PgStats.open(adminUrl, "postgres");
const pgSettings = await settingsClient.settings();
await settingsClient.close();
log(
  `PostgreSQL ${pgSettings.version} (${config.BENCH_PG}, autovacuum ${pgSettings.autovacuum}), postmaster pid ${pgPid}, nats pid ${natsPid} (${config.BENCH_NATS}), redis pid ${redisPid}`,
);

/** The processes whose CPU is reported: the environment's services, the router (nginx or this process), NATS, Redis, PostgreSQL. */
function sampledOf(env: Env): Sampled[] {
  const out: Sampled[] = env.stack.services.map((s) => ({ name: s.name.replace(/[#*].*$/, ""), pid: s.pid }));
  const nginx = env.stack.router.pids?.()[0];
  if (nginx) out.push({ name: "router (nginx)", pid: nginx, tree: true }, { name: "bench process", pid: process.pid });
  else out.push({ name: "router (bench process)", pid: process.pid });
  if (natsPid) out.push({ name: "NATS", pid: natsPid });
  if (redisPid) out.push({ name: "Redis", pid: redisPid });
  if (pgPid) out.push({ name: "PostgreSQL", pid: pgPid, tree: true });
  return out;
}

/** GET /sessions' default page size (docs/api.md, `listSessions`). */
const SESSIONS_PAGE = 20;
/** BENCH_PAUSES: where the services' pause logs and the load client's request times go. */
const pauseDir = config.BENCH_PAUSES ? fs.mkdtempSync(path.join(os.tmpdir(), "tog-bench-pauses-")) : undefined;
const SYSTEM_ENV = {
  GATEWAY_SKIP_AUTH: "0",
  RATE_LIMIT_RPM: "100000000",
  RATE_LIMIT_BURST: "10000000",
  LOG_LEVEL: "warn",
  DATABASE_POOL_MAX: "16",
  ...(pauseDir ? pauseProbeEnv(pauseDir) : {}),
};

/** BENCH_PAUSES: the file a rate job writes its requests to. */
const requestsFile = (label: string) => (pauseDir ? path.join(pauseDir, `${label}.requests`) : undefined);

/** BENCH_PAUSES: logs each cluster of the window's slow requests with the pauses it met. */
function logTail(label: string): void {
  const file = requestsFile(label);
  if (!file || !fs.existsSync(file)) return;
  const dir = path.dirname(file);
  const requests = readRequests(file);
  const pauses = [...readPauses(dir), ...(privatePg ? readPostgresPauses(privatePg.logFile) : [])];
  const clusters = slowClusters(requests, pauses);
  const withPause = clusters.filter((c) => c.pauses.length > 0).length;
  log(`  ${label}: ${clusters.length} clusters of slow requests, ${withPause} with a pause (logs in ${dir})`);
  const start = Math.min(...requests.map((r) => r.start));
  for (const line of describeClusters(clusters, start)) log(`    ${line}`);
}

/** The system as `npm start` runs it; without `runTasks` nothing runs tasks (they queue up). */
async function startSystem(runTasks: boolean): Promise<Env> {
  const layout = workerLayout(config.BENCH_WORKERS);
  const runner = { WORKER_CONCURRENCY: "128" };
  const env = await startE2eEnvironment({
    env: SYSTEM_ENV,
    services: runTasks
      ? { worker: runner, orchestrator: { ...layout.serviceEnv.orchestrator, ...runner } }
      : { orchestrator: { ORCHESTRATOR_WORKER: "off" } },
    replicas: runTasks ? layout.replicas : { worker: 0 },
    router: config.BENCH_ROUTER,
  });
  cleanups.push({ name: "environment", run: () => env.close() });
  return env;
}

async function closeSystem(env: Env): Promise<void> {
  const i = cleanups.findIndex((c) => c.name === "environment");
  if (i >= 0) cleanups.splice(i, 1);
  await env.close();
}

const SIMPLE_TASK = JSON.stringify({ query: "Say hello", mode: "simple" });
const BASELINE_BODY = JSON.stringify({ query: "hello" });
const json = { "content-type": "application/json" };

const LOAD_CLIENT = "load client (not in the sum)";

/**
 * CPU per process and, with the bench's own NATS, messages per client over the load's window;
 * `windowMs`, the window's wall time. `hooks` run at the window's start and end too.
 */
async function cpuAround(
  targets: Sampled[],
  job: LoadJob,
  hooks: { onStart?: () => void; onEnd?: () => void; flushProbe?: boolean } = {},
): Promise<{
  result: LoadResult;
  cpu: Map<string, number>;
  nats: Map<string, NatsCounts> | undefined;
  windowMs: number;
  /** Share of the window's machine time the hypervisor stole (0 on bare metal). */
  steal: number;
  /** Share of the window's machine time anything ran (/proc/stat), kernel threads included. */
  machineBusy: number;
  /** With `flushProbe`: the disk's flush latency over the window (lib/flush-probe.ts). */
  flush: FlushStats | undefined;
}> {
  let before: CpuSnapshot = new Map();
  let after: CpuSnapshot = new Map();
  let machineBefore = machineTimes();
  let machineAfter = machineBefore;
  const none = Promise.resolve<NatsSnapshot>(new Map());
  let natsBefore = none;
  let natsAfter = none;
  let started = 0;
  let windowMs = 0;
  let probe: FlushProbe | undefined;
  let flush: Promise<FlushStats | undefined> = Promise.resolve(undefined);
  // The load client's own CPU is shown beside the system's, not counted in it.
  const withClient = (pid: number) => [...targets, { name: LOAD_CLIENT, pid }];
  const result = await runLoad(job, {
    onStart: (pid) => {
      started = performance.now();
      before = snapshotCpu(withClient(pid));
      machineBefore = machineTimes();
      if (natsMonitor) natsBefore = natsSnapshot(natsMonitor);
      if (hooks.flushProbe) probe = startFlushProbe(flushProbeDir());
      hooks.onStart?.();
    },
    onEnd: (pid) => {
      windowMs = performance.now() - started;
      after = snapshotCpu(withClient(pid));
      machineAfter = machineTimes();
      if (natsMonitor) natsAfter = natsSnapshot(natsMonitor);
      if (probe) flush = probe.stop();
      hooks.onEnd?.();
    },
  });
  const nats = natsMonitor ? natsDelta(await natsBefore, await natsAfter) : undefined;
  return {
    result,
    cpu: cpuDelta(before, after),
    nats,
    windowMs,
    steal: stealShare(machineBefore, machineAfter),
    machineBusy: busyShare(machineBefore, machineAfter),
    flush: await flush,
  };
}

/** Beside the database's files: the bench's own PostgreSQL's directory, else the temporary one. */
const flushProbeDir = () => (privatePg ? path.dirname(privatePg.dataDir) : os.tmpdir());

/**
 * How busy the cores were in a window: the sampled processes' share of the machine's time (the
 * load client too), the whole machine's (/proc/stat, kernel threads included) and the steal.
 */
interface Busy {
  processes: number;
  machine: number;
  steal: number;
}
const busyOf = (w: { cpu: Map<string, number>; windowMs: number; machineBusy: number; steal: number }): Busy => ({
  processes: [...w.cpu.values()].reduce((a, b) => a + b, 0) / Math.max(1, w.windowMs * os.availableParallelism()),
  machine: w.machineBusy,
  steal: w.steal,
});

/** When the window's slowest flushes began, counted from its start. */
const slowFlushesText = (f: FlushStats) =>
  f.slow.length > 0
    ? ` (the slowest at ${f.slow.map((s) => `+${fmt(s.atSeconds, 1)} s: ${fmt(s.ms)} ms`).join(", ")})`
    : "";

/** A sentence on the disk's flush latency in a latency window, or nothing. */
const flushText = (f: FlushStats | undefined) =>
  f
    ? ` The disk's own flush latency in that window (an 8 KB write + fdatasync every 50 ms beside the database's files; a commit waits for a flush of the WAL): p50 / p99 / max ${fmt(f.p50)} / ${fmt(f.p99)} / ${fmt(f.max)} ms, ${f.over20} of ${f.count} over 20 ms${slowFlushesText(f)}.`
    : "";

/** The WAL flushes per task of the 2b window, where fewer tasks share each flush than at saturation. */
const walHalfText = (w: (typeof m)["walHalf"]) =>
  w && w.tasks > 0
    ? ` and ${fmt(w.wal.syncs / w.tasks, 2)} at the 2b rate (${fmt(w.wal.bytes / w.tasks / 1024, 1)} KB per task there)`
    : "";

const perTask = (cpu: Map<string, number>, n: number) =>
  Object.fromEntries([...cpu].map(([k, v]) => [k, v / Math.max(1, n)]));
/** CPU of every process but the load client's. */
const sum = (o: Record<string, number> | undefined) =>
  o ? Object.entries(o).reduce((a, [name, b]) => a + (name !== LOAD_CLIENT && Number.isFinite(b) ? b : 0), 0) : NaN;
const natsPerTask = (nats: Map<string, NatsCounts> | undefined, n: number) =>
  nats &&
  Object.fromEntries([...nats].map(([k, v]) => [k, { in: v.in / Math.max(1, n), out: v.out / Math.max(1, n) }]));

// ---------------------------------------------------------------------------------------------
/** The baseline's closed loop: express + one INSERT per request, as many connections as 1a. */
const insertAtMaximum = (url: string): LoadJob => ({
  mode: "max",
  url,
  method: "POST",
  headers: json,
  body: BASELINE_BODY,
  connections: config.BENCH_CONNECTIONS,
  seconds: config.BENCH_SECONDS,
  warmupSeconds: config.BENCH_WARMUP_SECONDS,
});

async function baselinePhase(): Promise<void> {
  log("baseline: bare express process");
  const baseline = await startBaseline();
  const insert = await cpuAround(baseline.sampled, insertAtMaximum(baseline.insertUrl));
  m.baselineInsert = insert.result;
  m.cpuBaselineMax = perTask(insert.cpu, insert.result.requests);
  log(`  express + INSERT: ${fmt(m.baselineInsert.rps)}/s`);
  m.bareToken = await runLoad({
    mode: "max",
    url: `${baseline.server.url}/api/v1/auth/token`,
    method: "POST",
    headers: json,
    body: "{}",
    connections: config.BENCH_CONNECTIONS,
    seconds: config.BENCH_SECONDS,
    warmupSeconds: config.BENCH_WARMUP_SECONDS,
  });
  log(`  bare express token route: ${fmt(m.bareToken.rps)}/s`);
  await baseline.stop();
}

/** The bare express process of the baselines, on a database of its own. */
async function startBaseline(): Promise<{
  server: RunningService;
  insertUrl: string;
  sampled: Sampled[];
  stop: () => Promise<void>;
}> {
  const database = await testkit.createTestDatabase({ migrated: false });
  const dropDatabase = { name: "baseline database", run: () => database.drop() };
  cleanups.push(dropDatabase);
  const { freePort } = await import("@tog/devstack");
  const port = await freePort();
  const server: RunningService = await startService({
    name: "baseline",
    entry: path.join(HERE, "baseline-server.ts"),
    env: { PORT: String(port), DATABASE_URL: database.url, DATABASE_POOL_MAX: SYSTEM_ENV.DATABASE_POOL_MAX },
    port,
    readyPath: "/api/v1/health",
  });
  const stopServer = { name: "baseline server", run: () => server.stop(2_000) };
  cleanups.push(stopServer);
  const sampled: Sampled[] = [{ name: "baseline server", pid: server.pid }];
  if (pgPid) sampled.push({ name: "PostgreSQL", pid: pgPid, tree: true });
  return {
    server,
    insertUrl: `${server.url}/items`,
    sampled,
    stop: async () => {
      await server.stop(2_000);
      await database.drop();
      for (const c of [stopServer, dropDatabase]) {
        const at = cleanups.indexOf(c);
        if (at >= 0) cleanups.splice(at, 1);
      }
    },
  };
}

/**
 * The bare express + INSERT process again once the system has stopped: at its maximum, so 2a is
 * compared with the baseline before and after it (a virtual machine's speed drifts within
 * minutes), then at the 2b rate (open loop): its CPU per request there against at its maximum is
 * what a request that arrives alone costs on this machine (docs/performance.md "CPU per task").
 */
async function baselineAgain(rate: number): Promise<void> {
  log("baseline again: bare express + INSERT at its maximum");
  const baseline = await startBaseline();
  try {
    m.baselineInsertAfter = await runLoad(insertAtMaximum(baseline.insertUrl));
    log(`  express + INSERT: ${fmt(m.baselineInsertAfter.rps)}/s; @ ${rate}/s:`);
    const half = await cpuAround(baseline.sampled, {
      mode: "rate",
      url: baseline.insertUrl,
      method: "POST",
      headers: json,
      body: BASELINE_BODY,
      rate,
      seconds: config.BENCH_SECONDS,
      warmupSeconds: config.BENCH_WARMUP_SECONDS,
    });
    m.baselineHalf = half.result;
    m.cpuBaselineHalf = perTask(half.cpu, half.result.requests);
    log(`  ${fmt(sum(m.cpuBaselineHalf))} ms CPU per request against ${fmt(sum(m.cpuBaselineMax))} at its maximum`);
  } finally {
    await baseline.stop();
  }
}

async function submitAndPortPhases(): Promise<void> {
  log("submit/port: the system without workers (tasks only queue up)");
  await readyWal();
  const env = await startSystem(false);
  try {
    const { key } = await env.createApiKey({ name: "bench" });
    const headers = { ...json, "x-api-key": key };
    const tasksUrl = `${env.baseUrl}/tasks`;
    if (phases.has("submit")) {
      const { result, cpu, nats } = await cpuAround(sampledOf(env), {
        mode: "max",
        url: tasksUrl,
        method: "POST",
        headers,
        body: SIMPLE_TASK,
        idempotency: true,
        connections: config.BENCH_CONNECTIONS,
        seconds: config.BENCH_SECONDS,
        warmupSeconds: config.BENCH_WARMUP_SECONDS,
      });
      m.submitMax = result;
      m.cpuSubmit = perTask(cpu, result.requests - result.non2xx - result.errors);
      m.natsSubmit = natsPerTask(nats, result.requests - result.non2xx - result.errors);
      log(
        `  POST /tasks max: ${fmt(result.rps)}/s p99 ${fmt(result.p99)} ms (${result.non2xx} non-2xx, ${result.errors} errors)`,
      );
      const rate = Math.max(1, Math.round(result.rps / 2));
      const half = await cpuAround(
        sampledOf(env),
        {
          mode: "rate",
          url: tasksUrl,
          method: "POST",
          headers,
          body: SIMPLE_TASK,
          idempotency: true,
          rate,
          seconds: config.BENCH_SECONDS,
          warmupSeconds: config.BENCH_LATENCY_WARMUP_SECONDS,
          latencyFile: requestsFile("1b"),
        },
        { flushProbe: true },
      );
      m.submitHalf = half.result;
      m.flushSubmitHalf = half.flush;
      // At half the rate each submit wakes every process on its way alone: CPU per submit, and
      // how busy that leaves the cores (docs/performance.md "The submit's tail at half the rate").
      m.cpuSubmitHalf = perTask(half.cpu, half.result.requests - half.result.non2xx - half.result.errors);
      m.busySubmitHalf = busyOf(half);
      logTail("1b");
      log(`  POST /tasks @ ${rate}/s: p50 ${fmt(m.submitHalf.p50)} ms p99 ${fmt(m.submitHalf.p99)} ms`);
      // Every accepted request must have created its own task (a fresh Idempotency-Key each).
      const { rows } = await queryOnce<{ n: string }>(env.database.url, "SELECT count(*) AS n FROM tasks");
      const accepted = [m.submitMax, m.submitHalf].reduce((a, r) => a + r.requests - r.non2xx - r.errors, 0);
      m.submitCreated = { accepted, tasks: Number(rows[0]!.n) };
      log(
        `  ${m.submitCreated.tasks} tasks created (warm-up included) for ${accepted} accepted requests in the windows`,
      );
    }
    if (phases.has("port")) {
      const rounds = config.BENCH_PORT_ROUNDS;
      const health = (url: string) => () =>
        runLoad({
          mode: "max",
          url,
          method: "GET",
          connections: config.BENCH_CONNECTIONS,
          seconds: Math.max(1, Math.round((2 * config.BENCH_SECONDS) / rounds)),
          warmupSeconds: config.BENCH_WARMUP_SECONDS,
        });
      const port = await alternateLoads(
        rounds,
        health(`${env.baseUrl}/health`),
        health(`${env.service("gateway").url}/api/v1/health`),
      );
      m.healthRouter = port.a;
      m.healthDirect = port.b;
      log(
        `  GET /health router ${fmt(m.healthRouter.rps)}/s, direct ${fmt(m.healthDirect.rps)}/s (medians of ${rounds} alternating rounds: ${port.rounds.map((r) => `${fmt(r.a.rps)}/${fmt(r.b.rps)}`).join(", ")})`,
      );
      m.gatewayToken = await runLoad({
        mode: "max",
        url: `${env.service("gateway").url}/api/v1/auth/token`,
        method: "POST",
        headers,
        body: "{}",
        connections: config.BENCH_CONNECTIONS,
        seconds: config.BENCH_SECONDS,
        warmupSeconds: config.BENCH_WARMUP_SECONDS,
      });
      log(`  gateway token route ${fmt(m.gatewayToken.rps)}/s (${m.gatewayToken.non2xx} non-2xx)`);
    }
  } finally {
    await closeSystem(env);
  }
}

async function completionPhase(env: Env): Promise<void> {
  log("completion: the system with workers");
  await readyWal();
  const { key } = await env.createApiKey({ name: "bench" });
  const headers = { ...json, "x-api-key": key };
  const nats = { url: env.env.NATS_URL!, prefix: env.natsPrefix };
  const stats = await PgStats.open(adminUrl, env.database.name);
  try {
    await quiet();
    const db0 = await stats.db();
    const wal0 = privatePg ? await stats.wal() : undefined;
    const tables0 = await tableCounters(env.database.url);
    const statements0 = config.BENCH_PG_STATEMENTS ? await stats.statements() : undefined;
    const {
      result,
      cpu,
      nats: natsMsgs,
      steal,
    } = await cpuAround(sampledOf(env), {
      mode: "tasks",
      url: `${env.baseUrl}/tasks`,
      method: "POST",
      headers,
      body: SIMPLE_TASK,
      inflight: config.BENCH_INFLIGHT,
      warmupSeconds: config.BENCH_WARMUP_SECONDS,
      seconds: config.BENCH_SECONDS,
      drainSeconds: 60,
      nats,
    });
    m.completionMax = result;
    m.stealCompletion = steal;
    const completedInWindow = Math.round((result.completion?.perSecond ?? 0) * config.BENCH_SECONDS);
    m.cpuCompletion = perTask(cpu, completedInWindow);
    m.natsCompletion = natsPerTask(natsMsgs, completedInWindow);
    log(
      `  completed ${fmt(result.completion?.perSecond)}/s at saturation (${config.BENCH_INFLIGHT} in flight; ${result.requests} submitted in the window, ${result.non2xx} non-2xx, ${result.errors} errors)`,
    );
    await quiet();
    const db1 = await stats.db();
    const wal = wal0 && diffWal(wal0, await stats.wal());
    const tables1 = await tableCounters(env.database.url);
    const tasks = result.completion?.total ?? 0;
    if (statements0) {
      const lines = diffStatements(statements0, await stats.statements(), Math.max(1, tasks), 30, "time");
      log(`  statements per completed task:\n    ${lines.join("\n    ")}`);
    }
    const tables: TableCounters = {};
    for (const [t, v] of Object.entries(tables1)) {
      const a = tables0[t];
      if (!a) continue;
      const d = minus(v, a);
      if (Object.values(d).some((x) => x !== 0)) tables[t] = d;
    }
    m.pgCompletion = { tasks, db: diffDb(db0, db1), tables, ...(wal ? { wal } : {}) };

    const rate = Math.max(1, Math.round((result.completion?.perSecond ?? 2) / 2));
    m.halfRate = rate;
    const halfWindow = { start: new Date(), end: new Date() };
    let walAtStart: Promise<WalCounters> | undefined;
    let walAtEnd: Promise<WalCounters> | undefined;
    const half = await cpuAround(
      sampledOf(env),
      {
        mode: "rate",
        url: `${env.baseUrl}/tasks`,
        method: "POST",
        headers,
        body: SIMPLE_TASK,
        rate,
        seconds: config.BENCH_SECONDS,
        warmupSeconds: config.BENCH_LATENCY_WARMUP_SECONDS,
        drainSeconds: 60,
        nats,
        latencyFile: requestsFile("2b"),
      },
      {
        onStart: () => {
          halfWindow.start = new Date();
          if (privatePg) walAtStart = stats.wal();
        },
        onEnd: () => {
          halfWindow.end = new Date();
          if (privatePg) walAtEnd = stats.wal();
        },
        flushProbe: true,
      },
    );
    if (walAtStart && walAtEnd)
      m.walHalf = { tasks: half.result.completion?.expected ?? 0, wal: diffWal(await walAtStart, await walAtEnd) };
    logTail("2b");
    m.completionHalf = half.result;
    m.flushHalf = half.flush;
    // Per task of the window that completed; and how busy the cores were, every process counted
    // (the load client too): at half the saturation rate the batches are small, so each task
    // costs more than at saturation (docs/performance.md "Where a task's time goes …").
    m.cpuHalf = perTask(half.cpu, half.result.completion?.count ?? 0);
    m.busyHalf = busyOf(half);
    m.completionHalfStages = await taskStages(env.database.url, halfWindow.start, halfWindow.end);
    log(
      `  @ ${rate}/s: submit → WORKFLOW_COMPLETED p50 ${fmt(m.completionHalf.completion?.p50)} ms p99 ${fmt(m.completionHalf.completion?.p99)} ms`,
    );
  } finally {
    await stats.close();
  }
}

/**
 * p50 and p99 of each stage of the tasks created in [from, to], from their own timestamps: created (the submit's
 * transaction) → claimed, claimed → final write, final write → terminal event stored by the persister.
 */
async function taskStages(url: string, from: Date, to: Date): Promise<Record<string, { p50: number; p99: number }>> {
  const { rows } = await queryOnce<{ stage: string; p50: number; p99: number }>(
    url,
    `SELECT stage, percentile_cont(0.5) WITHIN GROUP (ORDER BY ms) AS p50, percentile_cont(0.99) WITHIN GROUP (ORDER BY ms) AS p99
     FROM (SELECT unnest(ARRAY['created → claimed', 'claimed → final write', 'final write → terminal event stored']) AS stage,
                  unnest(ARRAY[extract(epoch FROM t.started_at - t.created_at), extract(epoch FROM t.completed_at - t.started_at),
                               extract(epoch FROM e.stored_at - t.completed_at)]) * 1000 AS ms
           FROM tasks t JOIN task_events e ON e.task_id = t.id AND e.type = 'WORKFLOW_COMPLETED'
           WHERE t.created_at BETWEEN $1 AND $2 AND t.completed_at IS NOT NULL) x
     GROUP BY stage`,
    [from, to],
  );
  return Object.fromEntries(rows.map((r) => [r.stage, { p50: Number(r.p50), p99: Number(r.p99) }]));
}

/** One statement on a connection of its own (the bench's checks between phases). */
async function queryOnce<R extends object>(url: string, text: string, values: unknown[] = []) {
  const pg = await import("pg");
  const c = new pg.default.Client({ connectionString: url });
  c.on("error", () => undefined);
  await c.connect();
  try {
    return await c.query<R>(text, values);
  } finally {
    await c.end();
  }
}

// ---------------------------------------------------------------------------------------------
async function historyPhase(env: Env): Promise<void> {
  log("history: fresh user vs seeded user");
  const { connect } = await import("@nats-io/transport-node");
  const nc = await connect({ servers: env.env.NATS_URL!, name: "bench-history" });
  const completed = new Map<string, () => void>();
  const done = new Set<string>();
  nc.subscribe(`${env.natsPrefix}.events.*`, {
    callback: (_err, msg) => {
      // The terminal event is the last of its message (docs/decisions.md "One message per write").
      const e = JSON.parse(lastEventTextOf(msg.string())) as { workflow_id?: string; type?: string };
      if (e.type !== "WORKFLOW_COMPLETED" || !e.workflow_id) return;
      done.add(e.workflow_id);
      completed.get(e.workflow_id)?.();
    },
  });
  const stats = await PgStats.open(adminUrl, env.database.name, env.database.url);
  try {
    const fresh = await env.createApiKey({ user: "bench-fresh", name: "bench", createUser: true });
    const seeded = await env.createApiKey({ user: "bench-seeded", name: "bench", createUser: true });
    const morekeys = async (user: string) =>
      Promise.all(
        Array.from(
          { length: config.BENCH_HISTORY_KEYS - 1 },
          async (_, i) => (await env.createApiKey({ user, name: `bench-${i + 2}` })).key,
        ),
      );
    const freshKeys = [fresh.key, ...(await morekeys("bench-fresh"))];
    const seededKeys = [seeded.key, ...(await morekeys("bench-seeded"))];
    // A second key per user for the latency pass, so the two passes do not share GET /tasks'
    // per-key limit (100/min).
    const freshLatencyKey = (await env.createApiKey({ user: "bench-fresh", name: "bench-latency" })).key;
    const seededLatencyKey = (await env.createApiKey({ user: "bench-seeded", name: "bench-latency" })).key;
    let rateLimited = 0;
    const call = async (key: string, method: string, p: string, body?: unknown) => {
      const t0 = performance.now();
      let res: Response;
      let text: string;
      for (let attempt = 1; ; attempt++) {
        res = await fetch(`${env.baseUrl}${p}`, {
          method,
          headers: { ...json, "x-api-key": key },
          body: body === undefined ? undefined : JSON.stringify(body),
        });
        text = await res.text();
        // GET /tasks has its own per-key limit (100/min, docs/api.md "Rate limits"): wait out `retry_after` rather
        // than fail.
        if (res.status !== 429 || attempt > 5) break;
        rateLimited++;
        let after = 5;
        try {
          after = Number((JSON.parse(text) as { retry_after?: number }).retry_after ?? 5);
        } catch {
          // not the spec's body: the default wait
        }
        await sleep(1_000 * Math.max(1, Math.min(60, after)));
      }
      const ms = performance.now() - t0;
      if (!res.ok) throw new Error(`${method} ${p}: ${res.status} ${text.slice(0, 300)}`);
      return {
        ms,
        body: JSON.parse(text) as Record<string, unknown>,
        sessionId: res.headers.get("x-session-id") ?? undefined,
      };
    };
    /** Submits a simple task and waits for its WORKFLOW_COMPLETED; resolves with the ids and the latency. */
    const runTask = async (key: string, sessionId?: string) => {
      const t0 = performance.now();
      const { body, sessionId: session } = await call(key, "POST", "/tasks", {
        query: "Say hello",
        mode: "simple",
        ...(sessionId ? { session_id: sessionId } : {}),
      });
      const id = body.task_id as string;
      if (!done.has(id)) {
        await new Promise<void>((resolve, reject) => {
          const timer = setTimeout(() => reject(new Error(`task ${id} did not complete in 60 s`)), 60_000);
          completed.set(id, () => {
            clearTimeout(timer);
            resolve();
          });
        });
        completed.delete(id);
      }
      if (!session) throw new Error("POST /tasks answered without X-Session-ID");
      return { id, sessionId: session, ms: performance.now() - t0 };
    };

    // The fresh user gets a full first page of everything a list returns (20 sessions, GET /sessions'
    // default page; as many tasks): without it a list answers the fresh user with fewer rows than the
    // seeded one, and the row would measure the page's size, not the history behind it.
    for (let i = 1; i < SESSIONS_PAGE; i++) await runTask(fresh.key, `bench-fresh-${i}`);
    const freshTask = await runTask(fresh.key);
    const seededTemplate = await runTask(seeded.key);
    log(
      `  seeding ${config.BENCH_SEED_SESSIONS} tasks in as many sessions and a ${config.BENCH_SEED_TURNS}-turn session`,
    );
    const seed = await seedHistory({
      databaseUrl: env.database.url,
      templateTaskId: seededTemplate.id,
      templateSessionId: seededTemplate.sessionId,
      userId: seeded.user_id,
      sessions: config.BENCH_SEED_SESSIONS,
      turns: config.BENCH_SEED_TURNS,
      analyze: true,
    });
    m.seed = { ...seed, sessions: config.BENCH_SEED_SESSIONS, turns: config.BENCH_SEED_TURNS };
    log(`  seeded in ${fmt(seed.ms / 1000)} s: ${JSON.stringify(seed.rows)}${seed.fixups ? " + seed-fixups.sql" : ""}`);

    // Each read of `key` is the user's next key in turn (GET /tasks' limit is per key).
    const user = (keys: string[], session: string, task: string) => {
      let turn = 0;
      return {
        get key() {
          return keys[turn++ % keys.length]!;
        },
        keys,
        session,
        task,
      };
    };
    const who = {
      fresh: user(freshKeys, freshTask.sessionId, freshTask.id),
      seeded: user(seededKeys, seed.bigSessionId, seed.bigSessionLastTaskId),
    };
    type Who = (typeof who)["fresh"];
    const endpoints: { name: string; path: (w: Who) => string }[] = [
      { name: "GET /tasks?limit=5", path: () => "/tasks?limit=5" },
      { name: "GET /tasks?limit=5&status=COMPLETED", path: () => "/tasks?limit=5&status=COMPLETED" },
      { name: "GET /tasks?limit=5&session_id=S", path: (w) => `/tasks?limit=5&session_id=${w.session}` },
      { name: "GET /tasks/{id}", path: (w) => `/tasks/${w.task}` },
      { name: "GET /tasks/{id}/events", path: (w) => `/tasks/${w.task}/events` },
      { name: "GET /tasks/{id}/timeline", path: (w) => `/tasks/${w.task}/timeline` },
      { name: "GET /sessions", path: () => "/sessions" },
      { name: "GET /sessions/{S}", path: (w) => `/sessions/${w.session}` },
      { name: "GET /sessions/{S}/history", path: (w) => `/sessions/${w.session}/history` },
      { name: "GET /sessions/{S}/events", path: (w) => `/sessions/${w.session}/events` },
    ];
    // Warm every path once per user (connections, caches, plans) and every key (the gateway's key
    // cache) before anything is counted.
    for (const e of endpoints) for (const w of [who.fresh, who.seeded]) await call(w.key, "GET", e.path(w));
    for (const w of [who.fresh, who.seeded]) for (const k of w.keys) await call(k, "GET", `/sessions/${w.session}`);

    // Background work of the services (periodic jobs): measured over an idle stretch of two quiet
    // periods as a rate, and that rate times each window's length subtracted from the window.
    await quiet();
    let last = await stats.db();
    let lastAt = performance.now();
    await quiet();
    await quiet();
    let now = await stats.db();
    const idleMs = performance.now() - lastAt;
    const noise = diffDb(last, now);
    m.historyNoise = {
      commits: (noise.commits * 10_000) / idleMs,
      tuples: (noise.tuples * 10_000) / idleMs,
      ownTuples: (noise.ownTuples * 10_000) / idleMs,
    };
    last = now;
    lastAt = performance.now();
    const windowCost = async (label: string, n: number, work: () => Promise<number[]>): Promise<Cost> => {
      // Read from the admin database, so profiling adds nothing to the measured counters.
      const before = config.BENCH_PG_STATEMENTS ? await stats.statements() : undefined;
      const times = await work();
      await quiet();
      now = await stats.db();
      if (before) {
        const lines = diffStatements(before, await stats.statements(), n);
        log(`  statements per unit, ${label}:\n    ${lines.join("\n    ")}`);
      }
      const share = (performance.now() - lastAt) / idleMs;
      const d = diffDb(last, now);
      last = now;
      lastAt = performance.now();
      const sorted = times.sort((a, b) => a - b);
      return {
        commits: (d.commits - noise.commits * share) / n,
        tuples: (d.tuples - noise.tuples * share) / n,
        ownTuples: (d.ownTuples - noise.ownTuples * share) / n,
        p50: sorted[Math.floor(sorted.length / 2)] ?? NaN,
        samples: n,
      };
    };
    const reps = config.BENCH_HISTORY_REPS;
    const rows: HistoryRow[] = [];
    for (const e of endpoints) {
      const measure = (w: Who) =>
        windowCost(`${e.name} (${w === who.fresh ? "fresh" : "seeded"})`, reps, async () => {
          const t: number[] = [];
          for (let i = 0; i < reps; i++) t.push((await call(w.key, "GET", e.path(w))).ms);
          return t;
        });
      const f = await measure(who.fresh);
      const s = await measure(who.seeded);
      rows.push({ name: e.name, fresh: f, seeded: s });
      log(
        `  ${e.name}: tuples ${fmt(f.tuples)} → ${fmt(s.tuples)} (own tables ${fmt(f.ownTuples)} → ${fmt(s.ownTuples)}), commits ${fmt(f.commits)} → ${fmt(s.commits)}, p50 ${fmt(f.p50)} → ${fmt(s.p50)} ms`,
      );
    }
    const n = config.BENCH_HISTORY_TASKS;
    const submitRun = (key: string, session?: string) =>
      windowCost(
        `submit+run (${key === who.fresh.key ? "fresh" : "seeded"}${session ? ", in S" : ""})`,
        n,
        async () => {
          const t: number[] = [];
          for (let i = 0; i < n; i++) t.push((await runTask(key, session)).ms);
          return t;
        },
      );
    for (const [name, f, s] of [
      ["submit+run simple task, new session", () => submitRun(who.fresh.key), () => submitRun(who.seeded.key)],
      [
        "submit+run simple task, in session S",
        () => submitRun(who.fresh.key, who.fresh.session),
        () => submitRun(who.seeded.key, who.seeded.session),
      ],
    ] as const) {
      const fc = await f();
      const sc = await s();
      rows.push({ name, fresh: fc, seeded: sc });
      log(
        `  ${name}: tuples ${fmt(fc.tuples)} → ${fmt(sc.tuples)} (own tables ${fmt(fc.ownTuples)} → ${fmt(sc.ownTuples)}), commits ${fmt(fc.commits)} → ${fmt(sc.commits)}, p50 ${fmt(fc.p50)} → ${fmt(sc.p50)} ms`,
      );
    }
    // Latency, separately: fresh and seeded requests alternate, so both see the same machine
    // (other load comes and goes between counter windows). After every counter window, so these
    // requests count nowhere.
    const median = (t: number[]) => t.sort((a, b) => a - b)[Math.floor(t.length / 2)] ?? NaN;
    const alternate = async (times: number, f: () => Promise<number>, g: () => Promise<number>) => {
      const a: number[] = [];
      const b: number[] = [];
      for (let i = 0; i < times; i++) {
        a.push(await f());
        b.push(await g());
      }
      return [median(a), median(b)] as const;
    };
    for (const [i, e] of endpoints.entries()) {
      const [f, s] = await alternate(
        reps,
        async () => (await call(freshLatencyKey, "GET", e.path(who.fresh))).ms,
        async () => (await call(seededLatencyKey, "GET", e.path(who.seeded))).ms,
      );
      rows[i]!.fresh.p50 = f;
      rows[i]!.seeded.p50 = s;
    }
    const [nf, ns] = await alternate(
      n,
      async () => (await runTask(who.fresh.key)).ms,
      async () => (await runTask(who.seeded.key)).ms,
    );
    const [sf, ss] = await alternate(
      n,
      async () => (await runTask(who.fresh.key, who.fresh.session)).ms,
      async () => (await runTask(who.seeded.key, who.seeded.session)).ms,
    );
    rows[endpoints.length]!.fresh.p50 = nf;
    rows[endpoints.length]!.seeded.p50 = ns;
    rows[endpoints.length + 1]!.fresh.p50 = sf;
    rows[endpoints.length + 1]!.seeded.p50 = ss;
    for (const r of rows) log(`  ${r.name}: p50 ${fmt(r.fresh.p50)} → ${fmt(r.seeded.p50)} ms (alternating)`);
    m.history = rows;
    m.historyRateLimited = rateLimited;
    if (rateLimited > 0) log(`  ${rateLimited} requests were rate-limited (429) and retried after Retry-After`);

    // total_count must stay exact: the API's figure against a count in SQL (after the windows).
    const listed = await call(seeded.key, "GET", "/tasks?limit=1");
    const sql = await queryOnce<{ n: string }>(env.database.url, "SELECT count(*) AS n FROM tasks WHERE user_id = $1", [
      seeded.user_id,
    ]);
    m.totalCount = { api: Number(listed.body.total_count), sql: Number(sql.rows[0]!.n) };

    if (phases.has("churn")) {
      // The same measurements before and after the churn, for a user whose own history is the
      // churn (its lists walk the churned rows) and for the submit+run path everyone takes.
      const churner = await env.createApiKey({ user: "bench-churn", name: "bench", createUser: true });
      const churnerKeys = user([churner.key, ...(await morekeys("bench-churn"))], "", "");
      await runTask(churner.key);
      // `latency` and `control` alternate in a pass of their own before and after the churn: the
      // control is the fresh user's same request, which the churn does not touch, so its change
      // between the passes is the host's, and the row compares the churned user's latency with it
      // taken out (minutes lie between the two passes; docs/performance.md "Limits of the bench").
      const probes: {
        name: string;
        run: () => Promise<Cost>;
        latency: () => Promise<number>;
        control: () => Promise<number>;
      }[] = [
        {
          name: "submit+run simple task, new session",
          run: () => submitRun(churner.key),
          latency: async () => (await runTask(churner.key)).ms,
          control: async () => (await runTask(who.fresh.key)).ms,
        },
        {
          name: "GET /tasks?limit=5 of the churned user",
          run: () =>
            windowCost("GET /tasks?limit=5 (churned user)", reps, async () => {
              const t: number[] = [];
              for (let i = 0; i < reps; i++) t.push((await call(churnerKeys.key, "GET", "/tasks?limit=5")).ms);
              return t;
            }),
          latency: async () => (await call(churnerKeys.key, "GET", "/tasks?limit=5")).ms,
          control: async () => (await call(who.fresh.key, "GET", "/tasks?limit=5")).ms,
        },
      ];
      const latencyPass = async () => {
        const out: ControlledLatency[] = [];
        for (const p of probes) {
          const [probe, control] = await alternate(reps, p.latency, p.control);
          out.push({ probe, control });
        }
        return out;
      };
      // A fresh counter window: the latency pass and the checks above ran since the last one.
      await quiet();
      last = await stats.db();
      lastAt = performance.now();
      const before: Cost[] = [];
      for (const p of probes) before.push(await p.run());
      const latencyBefore = await latencyPass();
      log(
        `  churn: ${config.BENCH_CHURN_TASKS} tasks' life cycle through SQL, autovacuum off for ${["tasks", "sessions", "user_counters"].join(", ")}…`,
      );
      try {
        const c = await churn({
          databaseUrl: env.database.url,
          userId: churner.user_id,
          tasks: config.BENCH_CHURN_TASKS,
          batch: 20,
        });
        await quiet();
        const tables = await churnedTables(env.database.url);
        // The background rate was measured before; restart the counter window after the churn.
        last = await stats.db();
        lastAt = performance.now();
        const after: Cost[] = [];
        for (const p of probes) after.push(await p.run());
        const latencyAfter = await latencyPass();
        probes.forEach((p, i) => {
          const b = latencyBefore[i]!;
          const a = latencyAfter[i]!;
          log(
            `  after churn, ${p.name}: tuples ${fmt(before[i]!.tuples)} → ${fmt(after[i]!.tuples)} (own tables ${fmt(before[i]!.ownTuples)} → ${fmt(after[i]!.ownTuples)}), commits ${fmt(before[i]!.commits)} → ${fmt(after[i]!.commits)}, p50 ${fmt(b.probe)} → ${fmt(a.probe)} ms, control ${fmt(b.control)} → ${fmt(a.control)} ms (counter windows ${fmt(before[i]!.p50)} → ${fmt(after[i]!.p50)} ms)`,
          );
          before[i]!.p50 = b.probe;
          after[i]!.p50 = hostAdjusted(a, b);
        });
        m.churn = {
          before,
          after,
          latency: { before: latencyBefore, after: latencyAfter },
          names: probes.map((p) => p.name),
          ms: c.ms,
          tasks: c.tasks,
          tables,
        };
      } finally {
        await restoreAutovacuum(env.database.url);
      }
    }
  } finally {
    await stats.close();
    await nc.drain().catch(() => undefined);
  }
}

// ---------------------------------------------------------------------------------------------
const startedAt = new Date();
let failed: unknown;
try {
  if (phases.has("baseline")) await baselinePhase();
  if (phases.has("submit") || phases.has("port")) await submitAndPortPhases();
  if (phases.has("completion") || phases.has("history")) {
    log(
      config.BENCH_WORKERS > 0
        ? `starting the system with ${config.BENCH_WORKERS} worker process(es)`
        : "starting the system, the orchestrator running tasks (as npm start)",
    );
    const env = await startSystem(true);
    try {
      if (phases.has("completion")) await completionPhase(env);
      if (phases.has("history")) await historyPhase(env);
    } catch (err) {
      // Name any service that died, with its last output, so a failed run says why.
      for (const s of env.stack.services.filter((x) => !x.isRunning)) {
        log(
          `service ${s.name} exited; last output:\n${s
            .output()
            .slice(-15)
            .map((l) => l.text)
            .join("\n")}`,
        );
      }
      throw err;
    } finally {
      await closeSystem(env);
    }
  }
  // The system stopped, so the baseline has the cores to itself as it had at its maximum.
  if (m.cpuBaselineMax && m.halfRate) await baselineAgain(m.halfRate);
} catch (err) {
  failed = err;
  log(`bench failed: ${(err as Error).stack ?? err}`);
} finally {
  await cleanup();
}

// ---------------------------------------------------------------------------------------------
// Report.
const base = m.baselineInsert?.rps ?? NaN;
const rows: TargetRow[] = [];
const ms = (n: number | undefined) => `${fmt(n)} ms`;
const perS = (n: number | undefined) => `${fmt(n)}/s`;
const within = (v: number | undefined, limit: number) =>
  v === undefined || !Number.isFinite(v) ? undefined : v <= limit;
const atLeast = (v: number, limit: number) => (Number.isFinite(v) ? v >= limit : undefined);

/** "N failed", with the statuses of the answers that were not 2xx where the load client counted them. */
const failedText = (r: LoadResult) => {
  const statuses = Object.entries(r.statuses ?? {}).map(([status, n]) => `${n} × ${status}`);
  const text = `${r.non2xx + r.errors} failed`;
  return statuses.length > 0 ? `${text}: ${statuses.join(", ")}` : text;
};

if (m.submitMax) {
  const r = ratioOf(m.submitMax.rps, base);
  rows.push({
    id: "1a",
    name: "POST /tasks accepted/s (public port, auth, Idempotency-Key, workers paused)",
    measured: `${perS(m.submitMax.rps)} (p99 ${ms(m.submitMax.p99)}, ${m.submitMax.non2xx + m.submitMax.errors} failed, ${m.submitCreated?.tasks ?? "?"} tasks created incl. warm-up for ${m.submitCreated?.accepted ?? "?"} accepted)`,
    baseline: `${perS(base)} express + INSERT`,
    ratio: fmt(r),
    target: "≥ 0.3×",
    pass: m.submitCreated && m.submitCreated.tasks < m.submitCreated.accepted ? false : atLeast(r, 0.3),
  });
}
if (m.submitHalf) {
  rows.push({
    id: "1b",
    name: `POST /tasks p99 at half that rate (${fmt(m.submitHalf.rps, 0)}/s)`,
    measured: `p99 ${ms(m.submitHalf.p99)} (p50 ${ms(m.submitHalf.p50)}, ${failedText(m.submitHalf)})`,
    baseline: "-",
    ratio: "-",
    target: "≤ 50 ms",
    pass: within(m.submitHalf.p99, 50) && m.submitHalf.non2xx + m.submitHalf.errors === 0,
  });
}
if (m.completionMax) {
  const c = m.completionMax.completion;
  // The baselines before and after the completion phase, averaged (1a runs right after the first).
  const after = m.baselineInsertAfter?.rps ?? NaN;
  const bracketed = Number.isFinite(after) && Number.isFinite(base);
  const base2a = bracketed ? (base + after) / 2 : base;
  const r = ratioOf(c?.perSecond ?? NaN, base2a);
  rows.push({
    id: "2a",
    name: `simple tasks completed/s at saturation (${config.BENCH_INFLIGHT} in flight)`,
    measured: perS(c?.perSecond),
    baseline: bracketed
      ? `${perS(base2a)} express + INSERT (mean of ${perS(base)} before and ${perS(after)} after)`
      : `${perS(base)} express + INSERT`,
    ratio: fmt(r),
    target: "≥ 0.1×",
    pass: atLeast(r, 0.1),
  });
}
if (m.completionHalf) {
  const c = m.completionHalf.completion;
  const all = c !== undefined && c.count === c.expected && c.expected > 0;
  const rate = `${fmt(m.completionHalf.rps, 0)}/s`;
  rows.push({
    id: "2b",
    name: `submit → WORKFLOW_COMPLETED p50 at half saturation (${rate})`,
    measured: `${ms(c?.p50)} (${c?.count}/${c?.expected} completed${m.completionHalf.non2xx + m.completionHalf.errors > 0 ? `, ${failedText(m.completionHalf)}` : ""})`,
    baseline: "-",
    ratio: "-",
    target: "≤ 30 ms",
    pass: all ? within(c?.p50, 30) : false,
  });
  rows.push({
    id: "2c",
    name: `submit → WORKFLOW_COMPLETED p99 at half saturation (${rate})`,
    measured: ms(c?.p99),
    baseline: "-",
    ratio: "-",
    target: "≤ 150 ms",
    pass: all ? within(c?.p99, 150) : false,
  });
}
const TUPLES_PER_TASK_LIMIT = 5_000;
const HISTORY_SLACK = { tuples: 20, commits: 0.25, ms: 2 };
// The history rows judge the tuples read from the project's own tables and indexes: the
// database-wide counter also holds the catalog reads of backends that (re)connect or reload
// their caches, which follow pool timing rather than the request and were most of the ±30
// tuples of noise (docs/performance.md "Limits of the bench"). Both are shown.
const tuplesOf = (x: Cost) => (Number.isFinite(x.ownTuples) ? x.ownTuples : x.tuples);
const costText = (x: Cost) =>
  `${fmt(tuplesOf(x), 0)} tuples (${fmt(x.tuples, 0)} with catalogs), ${fmt(x.commits, 1)} commits, ${ms(x.p50)}`;
if (m.history) {
  const label = `seeded user: ${fmt(config.BENCH_SEED_SESSIONS, 0)} tasks/sessions, S = ${fmt(config.BENCH_SEED_TURNS, 0)}-turn session`;
  m.history.forEach((h, i) => {
    const rt = ratioOf(Math.max(tuplesOf(h.seeded), 1), Math.max(tuplesOf(h.fresh), 1));
    const rc = ratioOf(Math.max(h.seeded.commits, 0.01), Math.max(h.fresh.commits, 0.01));
    const rl = ratioOf(h.seeded.p50, h.fresh.p50);
    // ≤ 1.2×, or within a small absolute slack where the figures are too small for a ratio to
    // mean anything (a commit in 20 requests, a few index entries, scheduling jitter).
    const ok = (seededV: number, freshV: number, slack: number) => seededV <= 1.2 * freshV || seededV - freshV <= slack;
    const pass = [rt, rc, rl].every((x) => Number.isFinite(x))
      ? ok(tuplesOf(h.seeded), tuplesOf(h.fresh), HISTORY_SLACK.tuples) &&
        ok(h.seeded.commits, h.fresh.commits, HISTORY_SLACK.commits) &&
        ok(h.seeded.p50, h.fresh.p50, HISTORY_SLACK.ms)
      : undefined;
    rows.push({
      id: `3${String.fromCharCode(97 + i)}`,
      name: `${h.name} (${i === 0 ? label : "seeded vs fresh"})`,
      measured: costText(h.seeded),
      baseline: costText(h.fresh),
      ratio: `${fmt(rt)} / ${fmt(rc)} / ${fmt(rl)}`,
      target: "each ≤ 1.2×",
      pass,
    });
  });
  const worst = Math.max(...m.history.filter((h) => h.name.startsWith("submit+run")).map((h) => tuplesOf(h.seeded)));
  rows.push({
    id: "3t",
    name: "submit+run of a simple task, tuples read per task (seeded user, worst)",
    measured: fmt(worst, 0),
    baseline: "-",
    ratio: "-",
    target: `≤ ${fmt(TUPLES_PER_TASK_LIMIT, 0)}`,
    pass: within(worst, TUPLES_PER_TASK_LIMIT),
  });
}
if (m.churn) {
  const ch = m.churn;
  ch.names.forEach((name, i) => {
    const b = ch.before[i]!;
    const a = ch.after[i]!;
    const ok = (after: number, before: number, slack: number) => after <= 1.2 * before || after - before <= slack;
    rows.push({
      id: `3${String.fromCharCode(117 + i)}`,
      name: `${name}, after ${fmt(ch.tasks, 0)} tasks of churn with no vacuum (vs before the churn)`,
      measured: costText(a),
      baseline: costText(b),
      ratio: `${fmt(ratioOf(Math.max(tuplesOf(a), 1), Math.max(tuplesOf(b), 1)))} / ${fmt(ratioOf(Math.max(a.commits, 0.01), Math.max(b.commits, 0.01)))} / ${fmt(ratioOf(a.p50, b.p50))}`,
      target: "each ≤ 1.2×",
      pass:
        ok(tuplesOf(a), tuplesOf(b), HISTORY_SLACK.tuples) &&
        ok(a.commits, b.commits, HISTORY_SLACK.commits) &&
        ok(a.p50, b.p50, HISTORY_SLACK.ms),
    });
  });
}
if (m.totalCount) {
  rows.push({
    id: "3n",
    name: "GET /tasks total_count of the seeded user is exact",
    measured: fmt(m.totalCount.api, 0),
    baseline: `${fmt(m.totalCount.sql, 0)} (SQL count)`,
    ratio: "-",
    target: "equal",
    pass: m.totalCount.api === m.totalCount.sql,
  });
}
if (m.healthRouter && m.healthDirect) {
  const r = ratioOf(m.healthRouter.rps, m.healthDirect.rps);
  rows.push({
    id: "4a",
    name: "GET /api/v1/health through the router vs straight at the gateway",
    measured: `${perS(m.healthRouter.rps)} (p99 ${ms(m.healthRouter.p99)})`,
    baseline: `${perS(m.healthDirect.rps)} (p99 ${ms(m.healthDirect.p99)})`,
    ratio: fmt(r),
    target: "≥ 0.7×",
    pass: atLeast(r, 0.7),
  });
}
if (m.gatewayToken && m.bareToken) {
  const r = ratioOf(m.gatewayToken.rps, m.bareToken.rps);
  rows.push({
    id: "4b",
    name: "gateway stack: POST /auth/token (API key auth, rate limit, logging, tracing) vs the same handler in bare express",
    measured: `${perS(m.gatewayToken.rps)} (${m.gatewayToken.non2xx + m.gatewayToken.errors} failed)`,
    baseline: perS(m.bareToken.rps),
    ratio: fmt(r),
    target: "≥ 0.5×",
    pass: m.gatewayToken.non2xx + m.gatewayToken.errors === 0 ? atLeast(r, 0.5) : false,
  });
}

/** "x % busy (…)": the sampled processes' share and, when known, the whole machine's. */
const busyText = (b: Busy) =>
  `${fmt(100 * b.processes, 0)} % busy with every process measured, the load client too, and ${fmt(100 * b.machine, 0)} % in all (/proc/stat: the kernel's threads and the machine's other processes too)`;

const cpuNames = [
  ...new Set([
    ...Object.keys(m.cpuSubmit ?? {}),
    ...Object.keys(m.cpuSubmitHalf ?? {}),
    ...Object.keys(m.cpuCompletion ?? {}),
    ...Object.keys(m.cpuHalf ?? {}),
  ]),
];
const order = [
  "gateway",
  "orchestrator",
  "worker",
  "stream",
  "session",
  "model-catalog",
  "router (bench process)",
  "NATS",
  "Redis",
  "PostgreSQL",
];
cpuNames.sort((a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99));
const cpuTable = markdownTable(
  [
    "process",
    "CPU ms per accepted submit (workers paused)",
    "CPU ms per accepted submit at half that rate (1b)",
    "CPU ms per completed task (saturation)",
    "CPU ms per completed task (half saturation, 2b)",
  ],
  [
    ...cpuNames
      .filter((n) => n !== LOAD_CLIENT)
      .map((n) => [
        n,
        fmt(m.cpuSubmit?.[n]),
        fmt(m.cpuSubmitHalf?.[n]),
        fmt(m.cpuCompletion?.[n]),
        fmt(m.cpuHalf?.[n]),
      ]),
    [
      "all of the above",
      fmt(sum(m.cpuSubmit)),
      fmt(sum(m.cpuSubmitHalf)),
      fmt(sum(m.cpuCompletion)),
      fmt(sum(m.cpuHalf)),
    ],
    [
      LOAD_CLIENT,
      fmt(m.cpuSubmit?.[LOAD_CLIENT]),
      fmt(m.cpuSubmitHalf?.[LOAD_CLIENT]),
      fmt(m.cpuCompletion?.[LOAD_CLIENT]),
      fmt(m.cpuHalf?.[LOAD_CLIENT]),
    ],
  ],
);
const natsNames = [...new Set([...Object.keys(m.natsSubmit ?? {}), ...Object.keys(m.natsCompletion ?? {})])].sort(
  (a, b) => (order.indexOf(a) + 1 || 99) - (order.indexOf(b) + 1 || 99) || a.localeCompare(b),
);
const inOut = (c: NatsCounts | undefined) => (c ? `${fmt(c.in, 1)} / ${fmt(c.out, 1)}` : "-");
const natsSum = (o: Record<string, NatsCounts> | undefined) =>
  o && Object.values(o).reduce((a, c) => ({ in: a.in + c.in, out: a.out + c.out }), { in: 0, out: 0 });
const natsTable = markdownTable(
  ["client connection", "messages in / out per accepted submit", "messages in / out per completed task"],
  [
    ...natsNames.map((n) => [n, inOut(m.natsSubmit?.[n]), inOut(m.natsCompletion?.[n])]),
    ["all clients", inOut(natsSum(m.natsSubmit)), inOut(natsSum(m.natsCompletion))],
  ],
);
const pgc = m.pgCompletion;
const pgTable = pgc
  ? markdownTable(
      ["per completed task", "commits", "tuples read", "rows inserted", "rows updated (HOT)", "rows deleted"],
      [
        ["whole database", fmt(pgc.db.commits / pgc.tasks, 1), fmt(pgc.db.tuples / pgc.tasks, 0), "", "", ""],
        ...Object.entries(pgc.tables)
          .sort()
          .map(([t, d]) => [
            t,
            "",
            fmt((d.seqRead + d.idxFetch) / pgc.tasks, 1),
            fmt(d.ins / pgc.tasks, 2),
            `${fmt(d.upd / pgc.tasks, 2)} (${fmt(d.hot / pgc.tasks, 2)})`,
            fmt(d.del / pgc.tasks, 2),
          ]),
      ],
    )
  : "";

let commit = "unknown";
try {
  commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: HERE, encoding: "utf8" }).trim();
} catch {
  // not a git checkout
}
const machine = `${os.cpus().length} × ${os.cpus()[0]?.model ?? "cpu"}, ${fmt(os.totalmem() / 2 ** 30, 1)} GiB, ${os.type()} ${os.release()}, load average at start ${os
  .loadavg()
  .map((l) => l.toFixed(1))
  .join(" ")}`;
const title = `Task bench ${startedAt.toISOString().slice(0, 16).replace("T", " ")} UTC, commit ${commit}`;
const setup = [
  `PostgreSQL ${pgSettings.version}, ${config.BENCH_PG === "private" ? "the bench's own instance" : "the machine's shared instance"}, autovacuum ${pgSettings.autovacuum}; Node ${process.version}; ${machine}.`,
  `BENCH_SECONDS=${config.BENCH_SECONDS}, BENCH_CONNECTIONS=${config.BENCH_CONNECTIONS}, BENCH_INFLIGHT=${config.BENCH_INFLIGHT}, BENCH_WORKERS=${config.BENCH_WORKERS}${config.BENCH_WORKERS === 0 ? " (the orchestrator runs tasks, as npm start: its rows include the worker)" : ""}, phases ${[...phases].join(",")}; public router ${resolveRouterKind(config.BENCH_ROUTER)} (BENCH_ROUTER=${config.BENCH_ROUTER}).`,
  m.seed
    ? `Seeded in ${fmt(m.seed.ms / 1000, 1)} s: ${Object.entries(m.seed.rows)
        .map(([t, n]) => `${t} ${fmt(n, 0)}`)
        .join(", ")}${m.seed.fixups ? " (+ seed-fixups.sql)" : ""}.`
    : "",
  m.churn
    ? `Churn rows 3u–3v: ${fmt(m.churn.tasks, 0)} tasks' row life cycle (insert, claim, mode, finish + session totals; 20 tasks per transaction) written through SQL in ${fmt(m.churn.ms / 1000, 1)} s with autovacuum off for the task tables; afterwards ${Object.entries(
        m.churn.tables,
      )
        .filter(([, t]) => t.dead > 0)
        .map(
          ([name, t]) =>
            `${name} ${fmt(t.live, 0)} live / ${fmt(t.dead, 0)} dead rows, ${fmt(100 * t.hotShare, 0)} % of updates HOT`,
        )
        .join(
          "; ",
        )}. Their latency: p50 of a pass alternating the churned user's request with the fresh user's same request, before and after the churn; the figure after is scaled by the fresh user's p50 before over after, so the host's drift between the passes is taken out (${m.churn.latency.after.map((a, i) => `${m.churn!.names[i]}: ${ms(m.churn!.latency.before[i]!.probe)} → ${ms(a.probe)}, fresh user ${ms(m.churn!.latency.before[i]!.control)} → ${ms(a.control)}`).join("; ")}).`
    : "",
  m.cpuSubmitHalf && m.busySubmitHalf && m.submitHalf
    ? `Row 1b: at ${fmt(m.submitHalf.rps, 0)} submits/s the system took ${fmt(sum(m.cpuSubmitHalf))} ms of CPU per accepted submit against ${fmt(sum(m.cpuSubmit))} ms at the 1a maximum (${fmt(sum(m.cpuSubmitHalf) / sum(m.cpuSubmit))}×: each submit wakes every process on its way alone), the load client ${fmt(m.cpuSubmitHalf[LOAD_CLIENT])} ms; the cores were ${busyText(m.busySubmitHalf)}${m.busySubmitHalf.steal > 0 ? `, steal ${fmt(100 * m.busySubmitHalf.steal, 1)} %` : ""}.${flushText(m.flushSubmitHalf)}`
    : "",
  m.completionHalfStages && Object.keys(m.completionHalfStages).length > 0
    ? `Latency rows 2b–2c, the window's tasks by their own timestamps (p50 / p99): ${[
        "created → claimed",
        "claimed → final write",
        "final write → terminal event stored",
      ]
        .filter((k) => m.completionHalfStages![k])
        .map((k) => `${k} ${fmt(m.completionHalfStages![k]!.p50)} / ${fmt(m.completionHalfStages![k]!.p99)} ms`)
        .join(
          ", ",
        )}; POST /tasks answered p50 / p99 ${fmt(m.completionHalf?.p50)} / ${fmt(m.completionHalf?.p99)} ms; the rest of submit → WORKFLOW_COMPLETED is the submit's way in (HTTP, gateway, gRPC) and the event's way out to the load client.${m.busyHalf !== undefined ? ` In that window the cores were ${busyText(m.busyHalf)}.` : ""}${m.busyHalf !== undefined && m.stealCompletion !== undefined ? ` The hypervisor took ${fmt(100 * m.stealCompletion, 1)} % of the machine's time in the 2a window and ${fmt(100 * m.busyHalf.steal, 1)} % in the 2b window (steal, /proc/stat: CPU the processes were ready to use and did not get).` : ""}${flushText(m.flushHalf)}`
    : "",
  m.cpuBaselineHalf && m.baselineHalf
    ? `A request that arrives alone costs more on this machine: the bare express + INSERT process at the 2b rate (${fmt(m.baselineHalf.rps, 0)}/s, open loop, after the system stopped; p50 ${fmt(m.baselineHalf.p50)} ms) took ${fmt(sum(m.cpuBaselineHalf))} ms of CPU per request (server + PostgreSQL) against ${fmt(sum(m.cpuBaselineMax))} ms at its maximum (${fmt(sum(m.cpuBaselineHalf) / sum(m.cpuBaselineMax))}×); the system took ${fmt(sum(m.cpuHalf))} ms per completed task at that rate against ${fmt(sum(m.cpuCompletion))} ms at saturation (${fmt(sum(m.cpuHalf) / sum(m.cpuCompletion))}×).`
    : "",
  m.historyNoise
    ? `History rows 3a–3l: ${config.BENCH_HISTORY_REPS} requests (or ${config.BENCH_HISTORY_TASKS} tasks) per counter window, minus the services' background work measured while idle (${fmt(m.historyNoise.commits, 1)} commits / ${fmt(m.historyNoise.ownTuples, 0)} tuples of the project's tables, ${fmt(m.historyNoise.tuples, 0)} with the catalogs' per 10 s) over the window's length${m.historyRateLimited ? ` (${m.historyRateLimited} requests waited out a 429)` : ""}; p50 latency from a separate pass alternating fresh and seeded; tuples = rows read from the project's tables and indexes (TOAST included; the database-wide figure, catalog reads included, in brackets); ratio column = tuples / commits / latency; PASS when each is ≤ 1.2× or within +${HISTORY_SLACK.tuples} tuples / +${HISTORY_SLACK.commits} commits / +${HISTORY_SLACK.ms} ms of the fresh user's.`
    : "",
  failed ? `**The run failed: ${(failed as Error).message}** (rows missing).` : "",
]
  .filter(Boolean)
  .join("\n");
const markdown = [
  `## ${title}`,
  "",
  setup,
  "",
  targetsTable(rows),
  "",
  cpuNames.length ? `### CPU per task\n\n${cpuTable}\n` : "",
  natsNames.length
    ? `### NATS messages per task (the bench's own server's /connz: in = sent by the client, out = delivered to it)\n\n${natsTable}\n`
    : "",
  pgTable ? `### PostgreSQL per completed task (saturation window, ${fmt(pgc!.tasks, 0)} tasks)\n\n${pgTable}\n` : "",
  pgc?.wal
    ? `WAL per completed task (the bench's own instance, nothing else writing): ${fmt(pgc.wal.bytes / pgc.tasks / 1024, 1)} KB in ${fmt(pgc.wal.records / pgc.tasks, 1)} records, ${fmt(pgc.wal.fpi / pgc.tasks, 2)} of them full-page images; ${fmt(pgc.wal.syncs / pgc.tasks, 2)} WAL flushes (fsync) per task at saturation${walHalfText(m.walHalf)}.\n`
    : "",
]
  .filter((s) => s !== "")
  .join("\n");
console.log(markdown);
const file = writeResults(
  config.BENCH_RESULTS_DIR,
  `tasks-${startedAt.toISOString().slice(0, 19).replace(/[:T]/g, "-")}-${config.BENCH_PG}`,
  markdown,
  {
    title,
    startedAt: startedAt.toISOString(),
    commit,
    machine,
    postgres: { ...pgSettings, kind: config.BENCH_PG },
    config,
    targets: rows,
    measurements: m,
  },
);
log(`results: ${path.relative(process.cwd(), file)} (+ .json)`);
process.exit(failed ? 1 : 0);
