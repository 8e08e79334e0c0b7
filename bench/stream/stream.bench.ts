// Issue 4 design targets of the stream service, each against a baseline run in the same bench:
// a bare node:http SSE server fed by core NATS that frames each event once (bare-server.ts).
//   A. fan-out of one task: bare → 2,000 SSE clients; ours (auth, ownership, JetStream,
//      replay) → 2,000 SSE + 500 WebSocket clients. Events are published to JetStream as workers
//      do, at increasing rates, the two servers taking turns at each rate; each step counts
//      deliveries (100% required, no gap) and the emit-to-client latency. Reported: the highest
//      delivery rate (events × clients per second) sustained with p99 ≤ 150 ms.
//      Target: ours ≥ 0.7× bare.
//   B. memory per idle connection at 10,000 connections: growth of the server's RSS, each reading
//      taken after a full garbage collection (through the inspector), so garbage not yet
//      collected is not counted as held. Target: ours ≤ 1.2× bare.
//   C. a 10,000-event replay to one client from the real-time cache (JetStream): ≤ 300 ms; and
//      from the permanent log (PostgreSQL): ≤ 1 s. Each on a fresh task (no warm hub), after
//      one unmeasured warm-up replay; median of 3.
// Clients run in forked processes (client-worker.ts); every process shares this machine's cores.
// Run: npm run bench:stream   (BENCH_* variables below change the load)
import { fork, type ChildProcess } from "node:child_process";
import { randomBytes, randomUUID } from "node:crypto";
import { readFileSync } from "node:fs";
import net from "node:net";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import WebSocket from "ws";
import { connectBus, systemSubjects, type Bus } from "@tog/bus";
import { createLogger, envInt, envList, loadConfig } from "@tog/core";
import { freePort, REPO_ROOT, startService, type RunningService } from "@tog/devstack";
import { buildEvent, eventMessageId } from "@tog/events";
import { createTestDatabase, provisionTestBus, testInfraConfig, uniqueId, type TestDatabase } from "@tog/testkit";

const config = loadConfig({
  BENCH_SSE_CLIENTS: envInt(2_000, 1).describe("SSE clients of the fan-out phase."),
  BENCH_WS_CLIENTS: envInt(500, 0).describe("WebSocket clients of the fan-out phase (ours only)."),
  BENCH_RATES: envList(["100", "150", "200", "250", "300", "350", "400", "500"]).describe(
    "Events per second of each fan-out step.",
  ),
  BENCH_STEP_SECONDS: envInt(5, 1).describe("Duration of each fan-out step."),
  BENCH_P99_MS: envInt(150, 1).describe("A step is sustained when every event arrived and p99 is at most this."),
  BENCH_IDLE_CONNECTIONS: envInt(10_000, 1).describe("Connections of the memory phase."),
  BENCH_REPLAY_EVENTS: envInt(10_000, 1).describe("Events of the replay phase."),
  BENCH_CLIENT_PROCESSES: envInt(2, 1).describe("Processes holding the SSE clients."),
  BENCH_PHASES: envList(["fanout", "memory", "replay"]).describe("Phases to run (A fanout, B memory, C replay)."),
  BENCH_SERVERS: envList(["bare", "ours"]).describe("Servers to measure."),
  BENCH_SERVER_NODE_OPTIONS: envList([]).describe("Extra node flags for the measured servers (e.g. --cpu-prof)."),
});
const phase = (name: string) => config.BENCH_PHASES.includes(name);
const serves = (kind: string) => config.BENCH_SERVERS.includes(kind);

const HERE = path.dirname(fileURLToPath(import.meta.url));
const DEFAULT_USER_ID = "00000000-0000-4000-8000-000000000001";
const TRACE_ID = "4bf92f3577b34da6a3ce929d0e0e4736";
const silent = createLogger({ service: "bench", level: "silent" });

interface Report {
  opened: number;
  delivered: number;
  gaps: number;
  duplicates: number;
  closedEarly: number;
  histogram: number[];
}

/** Forked client processes, addressed together. */
class ClientPool {
  readonly #children: ChildProcess[] = [];
  readonly #waiting = new Map<ChildProcess, ((m: any) => void)[]>();

  static async start(processes: number): Promise<ClientPool> {
    const pool = new ClientPool();
    await Promise.all(
      Array.from({ length: processes }, async () => {
        const child = fork(path.join(HERE, "client-worker.ts"), [], { stdio: ["ignore", "inherit", "inherit", "ipc"] });
        pool.#children.push(child);
        pool.#waiting.set(child, []);
        child.on("message", (m: any) => pool.#waiting.get(child)!.shift()?.(m));
        await pool.#next(child);
      }),
    );
    return pool;
  }

  #next(child: ChildProcess): Promise<any> {
    return new Promise((resolve) => this.#waiting.get(child)!.push(resolve));
  }

  get size(): number {
    return this.#children.length;
  }

  open(
    index: number,
    options: { kind: "sse" | "ws"; port: number; path: string; count: number; taskId: string },
  ): void {
    this.#children[index]!.send({ cmd: "open", host: "127.0.0.1", ...options });
  }

  async report(): Promise<Report> {
    const parts = (await Promise.all(
      this.#children.map((c) => {
        const p = this.#next(c);
        c.send({ cmd: "report" });
        return p;
      }),
    )) as Report[];
    const histogram = new Array<number>(parts[0]!.histogram.length).fill(0);
    for (const p of parts) p.histogram.forEach((v, i) => (histogram[i]! += v));
    const sum = (k: "opened" | "delivered" | "gaps" | "duplicates" | "closedEarly") =>
      parts.reduce((a, p) => a + p[k], 0);
    return {
      opened: sum("opened"),
      delivered: sum("delivered"),
      gaps: sum("gaps"),
      duplicates: sum("duplicates"),
      closedEarly: sum("closedEarly"),
      histogram,
    };
  }

  async reset(): Promise<void> {
    await Promise.all(
      this.#children.map((c) => {
        const p = this.#next(c);
        c.send({ cmd: "reset" });
        return p;
      }),
    );
  }

  async waitOpened(count: number, timeoutMs = 120_000): Promise<void> {
    const end = Date.now() + timeoutMs;
    for (;;) {
      const r = await this.report();
      if (r.opened >= count) return;
      if (Date.now() > end) throw new Error(`only ${r.opened} of ${count} connections opened`);
      await sleep(200);
    }
  }

  async close(): Promise<void> {
    await Promise.all(
      this.#children.map(
        (c) =>
          new Promise<void>((resolve) => {
            c.once("exit", () => resolve());
            c.send({ cmd: "close" });
          }),
      ),
    );
  }
}

function percentile(histogram: number[], p: number): number {
  const total = histogram.reduce((a, b) => a + b, 0);
  if (total === 0) return NaN;
  let seen = 0;
  for (let ms = 0; ms < histogram.length; ms++) {
    seen += histogram[ms]!;
    if (seen >= total * (p / 100)) return ms;
  }
  return histogram.length - 1;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

function rssKb(pid: number): number {
  const m = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return m ? Number(m[1]) : NaN;
}

/**
 * Memory of a server process after a full garbage collection, through the Node inspector (the
 * memory phase starts servers with --inspect), so that garbage awaiting collection is not
 * counted as memory held by connections. RSS is read from /proc.
 */
async function settledMemory(service: RunningService): Promise<{ rssKb: number; heapKb: number }> {
  const line = service.output().find((l) => l.text.includes("Debugger listening on ws://"));
  const url = line ? /ws:\/\/\S+/.exec(line.text)?.[0] : undefined;
  if (!url) throw new Error(`${service.name}: no inspector address in its output`);
  const socket = new WebSocket(url);
  await new Promise((resolve, reject) => {
    socket.once("open", resolve);
    socket.once("error", reject);
  });
  let next = 0;
  const call = (method: string, params: object = {}) =>
    new Promise<any>((resolve) => {
      const id = ++next;
      const onMessage = (data: Buffer) => {
        const m = JSON.parse(data.toString()) as { id?: number; result?: unknown };
        if (m.id === id) {
          socket.off("message", onMessage);
          resolve(m.result);
        }
      };
      socket.on("message", onMessage);
      socket.send(JSON.stringify({ id, method, params }));
    });
  try {
    const samples: { rssKb: number; heapKb: number }[] = [];
    for (let i = 0; i < 3; i++) {
      await call("HeapProfiler.collectGarbage");
      await sleep(300);
      const r = await call("Runtime.evaluate", { expression: "process.memoryUsage().heapUsed", returnByValue: true });
      samples.push({ rssKb: rssKb(service.pid), heapKb: Number(r.result.value) / 1024 });
    }
    samples.sort((a, b) => a.rssKb - b.rssKb);
    return samples[1]!;
  } finally {
    socket.close();
  }
}

// ---- infrastructure ------------------------------------------------------------------------

interface Infra {
  database: TestDatabase;
  pool: pg.Pool;
  bus: Bus;
  sessionId: string;
}

async function setUp(): Promise<Infra> {
  const database = await createTestDatabase();
  const pool = new pg.Pool({ connectionString: database.url, max: 4 });
  const bus = await connectBus({
    url: testInfraConfig.TEST_NATS_URL,
    name: "bench-stream",
    prefix: uniqueId("benchstream"),
    logger: silent,
  });
  await provisionTestBus(bus);
  const sessionId = randomUUID();
  await pool.query("INSERT INTO users (id, name) VALUES ($1, 'default') ON CONFLICT DO NOTHING", [DEFAULT_USER_ID]);
  await pool.query("INSERT INTO sessions (id, user_id, token_budget) VALUES ($1, $2, 1000000)", [
    sessionId,
    DEFAULT_USER_ID,
  ]);
  return { database, pool, bus, sessionId };
}

async function newTask(infra: Infra): Promise<string> {
  const id = randomUUID();
  await infra.pool.query(
    "INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id) VALUES ($1, $2, $3, 'bench', 'RUNNING', '{}', $4)",
    [id, DEFAULT_USER_ID, infra.sessionId, TRACE_ID],
  );
  return id;
}

function eventText(taskId: string, seq: number): string {
  return JSON.stringify(
    buildEvent({
      workflow_id: taskId,
      type: "LLM_PARTIAL",
      agent_id: "agent-1",
      message: "",
      seq,
      trace_id: TRACE_ID,
      data: {
        chunk: "The quick brown fox jumps over the lazy dog while streaming tokens to every client. ".repeat(2),
        chunk_index: seq,
        total_tokens_so_far: seq * 12,
      },
    }),
  );
}

/** Publishes events to JetStream in order (pipelined; one publisher per task keeps the order). */
class Publisher {
  readonly #bus: Bus;
  readonly taskId: string;
  seq = 0;

  constructor(bus: Bus, taskId: string) {
    this.#bus = bus;
    this.taskId = taskId;
  }

  async publish(count: number): Promise<void> {
    const subject = systemSubjects(this.#bus.prefix).events(this.taskId);
    const acks: Promise<unknown>[] = [];
    for (let i = 0; i < count; i++) {
      const seq = ++this.seq;
      acks.push(
        this.#bus.js.publish(subject, eventText(this.taskId, seq), {
          msgID: eventMessageId({ workflow_id: this.taskId, seq }),
        }),
      );
    }
    await Promise.all(acks);
  }

  /** `rate` events per second for `seconds`, in 10 ms ticks. */
  async paced(rate: number, seconds: number): Promise<number> {
    const total = rate * seconds;
    const started = Date.now();
    let sent = 0;
    const pending: Promise<void>[] = [];
    while (sent < total) {
      const due = Math.min(total, Math.floor(((Date.now() - started) / 1000) * rate));
      if (due > sent) {
        pending.push(this.publish(due - sent));
        sent = due;
      }
      await sleep(10);
    }
    await Promise.all(pending);
    return total;
  }
}

// ---- servers -------------------------------------------------------------------------------

type Kind = "bare" | "ours";

async function startServer(kind: Kind, infra: Infra, nodeOptions: string[] = []): Promise<RunningService> {
  const port = await freePort();
  const flags = [...config.BENCH_SERVER_NODE_OPTIONS, ...nodeOptions];
  const common = {
    NATS_URL: testInfraConfig.TEST_NATS_URL,
    NATS_PREFIX: infra.bus.prefix,
    PORT: String(port),
    ...(flags.length > 0 ? { NODE_OPTIONS: flags.join(" ") } : {}),
  };
  if (kind === "bare") {
    return startService({
      name: "bare",
      entry: path.join(HERE, "bare-server.ts"),
      cwd: REPO_ROOT,
      env: common,
      port,
      logs: "capture",
    });
  }
  return startService({
    name: "stream",
    entry: path.join(REPO_ROOT, "services/stream/src/main.ts"),
    cwd: REPO_ROOT,
    env: {
      ...common,
      NODE_ENV: "production",
      AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"),
      GATEWAY_SKIP_AUTH: "1",
      DATABASE_URL: infra.database.url,
      DATABASE_POOL_MAX: "4",
      LOG_LEVEL: "warn",
      STREAM_MAX_CONNECTIONS: "100000",
      // Every bench client opens as the default user: the stream-open limit must not refuse them,
      // but each open still pays its rate-limit count (Redis), as in production.
      REDIS_URL: testInfraConfig.TEST_REDIS_URL,
      REDIS_KEY_PREFIX: `${infra.bus.prefix}:`,
      RATE_LIMIT_STREAM_RPM: "100000000",
      RATE_LIMIT_STREAM_BURST: "100000000",
    },
    port,
    readyPath: "/health",
    logs: "capture",
  });
}

const ssePath = (kind: Kind, taskId: string) =>
  kind === "bare" ? `/sse?workflow_id=${taskId}` : `/api/v1/stream/sse?workflow_id=${taskId}`;

// ---- phases --------------------------------------------------------------------------------

interface Step {
  rate: number;
  clients: number;
  delivered: number;
  expected: number;
  p50: number;
  p99: number;
  gaps: number;
  duplicates: number;
  dropped: number;
  sustained: boolean;
}

interface FanOutTarget {
  kind: Kind;
  server: RunningService;
  pool: ClientPool;
  publisher: Publisher;
  clients: number;
  steps: Step[];
  failed: boolean;
}

async function prepareFanOut(kind: Kind, infra: Infra): Promise<FanOutTarget> {
  const server = await startServer(kind, infra);
  const ws = kind === "ours" ? config.BENCH_WS_CLIENTS : 0;
  const pool = await ClientPool.start(config.BENCH_CLIENT_PROCESSES + (ws > 0 ? 1 : 0));
  const taskId = await newTask(infra);
  const publisher = new Publisher(infra.bus, taskId);
  const sse = config.BENCH_SSE_CLIENTS;
  const per = Math.ceil(sse / config.BENCH_CLIENT_PROCESSES);
  for (let i = 0; i < config.BENCH_CLIENT_PROCESSES; i++) {
    pool.open(i, {
      kind: "sse",
      port: server.port!,
      path: ssePath(kind, taskId),
      count: Math.min(per, sse - i * per),
      taskId,
    });
  }
  if (ws > 0)
    pool.open(config.BENCH_CLIENT_PROCESSES, {
      kind: "ws",
      port: server.port!,
      path: "/api/v1/stream/ws",
      count: ws,
      taskId,
    });
  const clients = sse + ws;
  await pool.waitOpened(clients);
  await sleep(500);
  // Warm-up (JIT, buffers), not measured.
  await publisher.paced(100, 2);
  await sleep(1_000);
  return { kind, server, pool, publisher, clients, steps: [], failed: false };
}

async function runStep(t: FanOutTarget, rate: number): Promise<Step> {
  await t.pool.reset();
  const events = await t.publisher.paced(rate, config.BENCH_STEP_SECONDS);
  const expected = events * t.clients;
  const end = Date.now() + 5_000;
  let r = await t.pool.report();
  while (r.delivered < expected && Date.now() < end) {
    await sleep(200);
    r = await t.pool.report();
  }
  const step: Step = {
    rate,
    clients: t.clients,
    delivered: r.delivered,
    expected,
    p50: percentile(r.histogram, 50),
    p99: percentile(r.histogram, 99),
    gaps: r.gaps,
    duplicates: r.duplicates,
    dropped: r.closedEarly,
    sustained: false,
  };
  step.sustained = r.delivered === expected && step.p99 <= config.BENCH_P99_MS && r.closedEarly === 0 && r.gaps === 0;
  process.stderr.write(
    `[${t.kind}] ${rate} ev/s × ${t.clients}: ${r.delivered}/${expected} delivered, p50 ${step.p50} ms, p99 ${step.p99} ms, gaps ${r.gaps}, dropped ${r.closedEarly}${step.sustained ? "" : "  ← not sustained"}\n`,
  );
  return step;
}

/**
 * Both servers hold their clients at once and take turns at each rate (bare, then ours), so
 * that whatever else the machine does weighs on both alike. A server leaves the ladder at its
 * first step that is not sustained.
 */
async function fanOut(kinds: Kind[], infra: Infra): Promise<Map<Kind, Step[]>> {
  const targets: FanOutTarget[] = [];
  try {
    for (const kind of kinds) targets.push(await prepareFanOut(kind, infra));
    for (const rateText of config.BENCH_RATES) {
      for (const t of targets) {
        if (t.failed) continue;
        const step = await runStep(t, Number(rateText));
        t.steps.push(step);
        if (!step.sustained) t.failed = true;
        await sleep(1_000);
      }
      if (targets.every((t) => t.failed)) break;
    }
  } finally {
    for (const t of targets) {
      await t.pool.close();
      await t.server.stop(5_000);
    }
  }
  return new Map(targets.map((t) => [t.kind, t.steps]));
}

interface MemoryResult {
  perConnectionKb: number;
  heapPerConnectionKb: number;
  rssBeforeMb: number;
  rssAfterMb: number;
}

async function idleMemory(kind: Kind, infra: Infra): Promise<MemoryResult> {
  const server = await startServer(kind, infra, ["--inspect=127.0.0.1:0"]);
  const warm = await ClientPool.start(1);
  const pool = await ClientPool.start(2);
  try {
    const taskId = await newTask(infra);
    // Warm the code paths first, so the measured growth is the connections' own.
    warm.open(0, { kind: "sse", port: server.port!, path: ssePath(kind, taskId), count: 200, taskId });
    await warm.waitOpened(200);
    await sleep(1_000);
    const before = await settledMemory(server);
    const n = config.BENCH_IDLE_CONNECTIONS;
    pool.open(0, {
      kind: "sse",
      port: server.port!,
      path: ssePath(kind, taskId),
      count: Math.ceil(n / 2),
      taskId,
    });
    pool.open(1, {
      kind: "sse",
      port: server.port!,
      path: ssePath(kind, taskId),
      count: Math.floor(n / 2),
      taskId,
    });
    await pool.waitOpened(n);
    await sleep(2_000);
    const after = await settledMemory(server);
    return {
      perConnectionKb: (after.rssKb - before.rssKb) / n,
      heapPerConnectionKb: (after.heapKb - before.heapKb) / n,
      rssBeforeMb: before.rssKb / 1024,
      rssAfterMb: after.rssKb / 1024,
    };
  } finally {
    await pool.close();
    await warm.close();
    await server.stop(5_000);
  }
}

/** One client: time from the request to the last of `count` events. */
async function timeReplay(port: number, taskId: string, count: number): Promise<number> {
  return new Promise((resolve, reject) => {
    const started = performance.now();
    const socket = net.connect(port, "127.0.0.1");
    let seen = 0;
    let rest = "";
    socket.on("connect", () =>
      socket.write(`GET /api/v1/stream/sse?workflow_id=${taskId} HTTP/1.1\r\nHost: x\r\n\r\n`),
    );
    socket.on("data", (chunk: Buffer) => {
      const s = rest + chunk.toString("latin1");
      let from = 0;
      for (;;) {
        const at = s.indexOf("\nid: ", from);
        if (at < 0) break;
        seen++;
        from = at + 5;
      }
      rest = s.slice(Math.max(0, s.length - 8));
      if (seen >= count) {
        const ms = performance.now() - started;
        socket.destroy();
        resolve(ms);
      }
    });
    socket.on("error", reject);
    setTimeout(() => reject(new Error(`replay of ${count}: only ${seen} after 30 s`)), 30_000).unref();
  });
}

async function replays(infra: Infra): Promise<{ jetstream: number[]; postgres: number[] }> {
  const n = config.BENCH_REPLAY_EVENTS;
  const server = await startServer("ours", infra);
  const out = { jetstream: [] as number[], postgres: [] as number[] };
  try {
    const warm = await newTask(infra);
    await new Publisher(infra.bus, warm).publish(1_000);
    await timeReplay(server.port!, warm, 1_000);
    for (let run = 0; run < 3; run++) {
      const id = await newTask(infra);
      const publisher = new Publisher(infra.bus, id);
      for (let done = 0; done < n; done += 1_000) await publisher.publish(Math.min(1_000, n - done));
      out.jetstream.push(await timeReplay(server.port!, id, n));
    }
    for (let run = 0; run < 3; run++) {
      // Only in the permanent log (as after the real-time window): never published.
      const id = await newTask(infra);
      const texts = Array.from({ length: n }, (_, i) => eventText(id, i + 1));
      await infra.pool.query(
        `INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
         SELECT $1::uuid, s, 'LLM_PARTIAL', 'agent-1', now(), e::json FROM unnest($2::int[], $3::text[]) AS u(s, e)`,
        [id, texts.map((_, i) => i + 1), texts],
      );
      out.postgres.push(await timeReplay(server.port!, id, n));
    }
  } finally {
    await server.stop(5_000);
  }
  return out;
}

// ---- run -----------------------------------------------------------------------------------

const infra = await setUp();
try {
  const none: Step[] = [];
  const noMemory: MemoryResult = { perConnectionKb: NaN, heapPerConnectionKb: NaN, rssBeforeMb: NaN, rssAfterMb: NaN };
  const kinds = (["bare", "ours"] as const).filter((k) => serves(k));
  const ladders = phase("fanout")
    ? (process.stderr.write("A. fan-out\n"), await fanOut([...kinds], infra))
    : new Map<Kind, Step[]>();
  const bareSteps = ladders.get("bare") ?? none;
  const ourSteps = ladders.get("ours") ?? none;
  const bareMemory =
    phase("memory") && serves("bare")
      ? (process.stderr.write("B. idle memory (bare)\n"), await idleMemory("bare", infra))
      : noMemory;
  const ourMemory =
    phase("memory") && serves("ours")
      ? (process.stderr.write("B. idle memory (ours)\n"), await idleMemory("ours", infra))
      : noMemory;
  const replay =
    phase("replay") && serves("ours")
      ? (process.stderr.write("C. replay\n"), await replays(infra))
      : { jetstream: [NaN], postgres: [NaN] };

  const best = (steps: Step[]) => steps.filter((s) => s.sustained).at(-1);
  const bareBest = best(bareSteps);
  const ourBest = best(ourSteps);
  const rate = (s: Step | undefined) => (s ? s.rate * s.clients : 0);
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const fmt = (n: number, digits = 0) => (Number.isFinite(n) ? n.toFixed(digits) : "-");

  const rows: [string, string, string, string, string][] = [
    [
      `A. max sustained delivery (events/s, 100% delivered, p99 ≤ ${config.BENCH_P99_MS} ms)`,
      bareBest ? `${fmt(rate(bareBest))} (${bareBest.rate}/s × ${bareBest.clients} SSE)` : "none",
      ourBest
        ? `${fmt(rate(ourBest))} (${ourBest.rate}/s × ${config.BENCH_SSE_CLIENTS} SSE + ${config.BENCH_WS_CLIENTS} WS)`
        : "none",
      "≥ 0.7× bare",
      bareBest && ourBest ? `${fmt(rate(ourBest) / rate(bareBest), 2)}×` : "-",
    ],
    [
      "A. p50 / p99 at that step (ms)",
      bareBest ? `${bareBest.p50} / ${bareBest.p99}` : "-",
      ourBest ? `${ourBest.p50} / ${ourBest.p99}` : "-",
      "p99 ≤ 150",
      "",
    ],
    [
      `B. memory per idle connection at ${config.BENCH_IDLE_CONNECTIONS} (KB RSS, after a full GC)`,
      `${fmt(bareMemory.perConnectionKb, 1)} (${fmt(bareMemory.rssBeforeMb)} → ${fmt(bareMemory.rssAfterMb)} MB)`,
      `${fmt(ourMemory.perConnectionKb, 1)} (${fmt(ourMemory.rssBeforeMb)} → ${fmt(ourMemory.rssAfterMb)} MB)`,
      "≤ 1.2× bare",
      `${fmt(ourMemory.perConnectionKb / bareMemory.perConnectionKb, 2)}×`,
    ],
    [
      "B. of which JS heap per idle connection (KB)",
      fmt(bareMemory.heapPerConnectionKb, 1),
      fmt(ourMemory.heapPerConnectionKb, 1),
      "",
      `${fmt(ourMemory.heapPerConnectionKb / bareMemory.heapPerConnectionKb, 2)}×`,
    ],
    [
      `C. ${config.BENCH_REPLAY_EVENTS}-event replay from JetStream (ms, median of 3)`,
      "-",
      `${fmt(median(replay.jetstream))} (${replay.jetstream.map((x) => fmt(x)).join(", ")})`,
      "≤ 300",
      "",
    ],
    [
      `C. ${config.BENCH_REPLAY_EVENTS}-event replay from PostgreSQL (ms, median of 3)`,
      "-",
      `${fmt(median(replay.postgres))} (${replay.postgres.map((x) => fmt(x)).join(", ")})`,
      "≤ 1000",
      "",
    ],
  ];
  const table = [
    "| Measure | bare node:http + core NATS | stream service | target | ratio |",
    "|---|---|---|---|---|",
    ...rows.map((r) => `| ${r.join(" | ")} |`),
  ];
  const ladder = (name: string, steps: Step[]) =>
    steps.map(
      (s) =>
        `| ${name} | ${s.rate} | ${s.clients} | ${s.delivered}/${s.expected} | ${s.p50} | ${s.p99} | ${s.gaps} | ${s.dropped} | ${s.sustained ? "yes" : "no"} |`,
    );
  process.stdout.write(
    `\n${table.join("\n")}\n\nFan-out steps:\n\n| server | events/s | clients | delivered | p50 ms | p99 ms | gaps | dropped | sustained |\n|---|---|---|---|---|---|---|---|---|\n${[...ladder("bare", bareSteps), ...ladder("ours", ourSteps)].join("\n")}\n`,
  );
} finally {
  await infra.bus.jsm.streams.delete(infra.bus.streamName("EVENTS")).catch(() => undefined);
  await infra.bus.jsm.streams.delete(infra.bus.streamName("RUNS")).catch(() => undefined);
  await infra.bus.close();
  await infra.pool.end();
  await infra.database.drop();
}
