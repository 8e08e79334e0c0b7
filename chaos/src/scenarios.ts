// The faults. Each scenario says which system it needs and what it does while the load runs;
// it returns the recovery time it measured and notes for the report (docs/reliability.md says
// what each one guarantees).
import pg from "pg";
import { describeStreams, follow, keepFollowing, verifyStreams } from "./streams.ts";
import { freePort, routesFor, SERVICES, type RunningService, type ServiceDefinition } from "@tog/devstack";
import type { ChaosSystem, SystemOptions } from "./system.ts";
import { taskBody, type Load } from "./load.ts";
import type { StreamVerdict, Subscription } from "./streams.ts";
import { untilPostgresAnswers } from "@tog/testkit";

export interface FaultResult {
  /** Worst time to recover the scenario measured (ms), see `recoveryMeaning`. */
  recoveryMs: number | null;
  notes: string[];
  /** Scenarios with stream subscribers: how their streams went. */
  streams?: StreamVerdict;
  /** Figures the scenario measured beyond the verdict, by name (the e2e versions assert on them). */
  figures?: Record<string, number>;
}

/** Per subscriber that resumed after `since`: ms from `since` to the connection that resumed (sorted). */
function resumeTimes(subscriptions: Subscription[], since: number): number[] {
  const times: number[] = [];
  for (const s of subscriptions) {
    const withEvents = s.connections.filter((c) => c.seqs.length > 0);
    const resumed = withEvents.find((c, i) => i > 0 && (c.openedAt ?? 0) >= since);
    if (resumed?.openedAt !== undefined) times.push(resumed.openedAt - since);
  }
  return times.sort((a, b) => a - b);
}

/** The run's settings (chaos.ts reads them from the environment). */
export interface ChaosSettings {
  tasks: number;
  rate: number;
  /** Tasks of the workers-sigkill scenario (CHAOS_WORKER_TASKS). */
  workerTasks: number;
  /** Subscribers of the stream scenarios (CHAOS_STREAM_SUBSCRIBERS). */
  streamSubscribers: number;
  /** Subscribers kept during the rolling restart (CHAOS_ROLLING_SUBSCRIBERS). */
  rollingSubscribers: number;
  /** How long nats-restart pauses NATS with SIGSTOP (20 s in the report, shorter in the e2e version). */
  natsPauseSeconds: number;
}

export interface ScenarioContext {
  settings: ChaosSettings;
  sys: ChaosSystem;
  load: Load;
  log(message: string): void;
  /** Submits one simple task (retrying with one Idempotency-Key) and resolves with the ms until it is terminal. */
  probe(): Promise<number>;
  /** GET /readiness status codes sampled every 250 ms while `fn` runs (0: no answer within 3 s; its own deadline is 2 s). */
  readinessDuring(fn: () => Promise<void>): Promise<number[]>;
  /** Resolves once `n` submissions have task ids (the load is under way). */
  accepted(n: number): Promise<void>;
}

export interface Scenario {
  name: string;
  description: string;
  /** What the recovery column means for this scenario. */
  recoveryMeaning: string;
  system?: SystemOptions;
  /** Runs before the load starts (topology changes that are not the fault). */
  prepare?(sys: ChaosSystem): Promise<void>;
  /** The load this scenario offers instead of the run's CHAOS_TASKS / CHAOS_RATE (read after prepare). */
  load?(settings: ChaosSettings): { tasks: number; rate: number };
  fault(ctx: ScenarioContext): Promise<FaultResult>;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const workerKills: Scenario = {
  name: "workers-sigkill",
  description:
    "3 workers; every ~4 s one random worker is SIGKILLed and a new one started, during the whole submission (CHAOS_WORKER_TASKS tasks)",
  recoveryMeaning:
    "longest time from a kill to the first event of the next run of a task the killed worker held (ERROR_RECOVERY when it had checkpoints)",
  system: { replicas: { worker: 3 } },
  load: (defaults) => ({ tasks: defaults.workerTasks, rate: defaults.rate }),
  async fault(ctx) {
    const client = new pg.Client({ connectionString: ctx.sys.databaseUrl });
    await client.connect();
    // Per kill: when, and the tasks whose lease the victim held (its worker id holds its pid).
    const kills: { at: number; held: string[] }[] = [];
    let done = false;
    void ctx.load.submitted.then(() => (done = true));
    await ctx.accepted(20);
    while (!done) {
      const live = ctx.sys.workers.filter((w) => w.isRunning);
      const victim = live[Math.floor(Math.random() * live.length)];
      if (victim) {
        const held = await client.query<{ id: string }>(
          `SELECT id::text FROM tasks WHERE lease_owner LIKE $1 AND completed_at IS NULL`,
          [`%:${victim.pid}:%`],
        );
        const at = Date.now();
        await victim.kill();
        kills.push({ at, held: held.rows.map((r) => r.id) });
        ctx.log(`SIGKILL ${victim.name} (pid ${victim.pid}) holding ${held.rowCount} runs`);
        await ctx.sys.addWorker();
      }
      await sleep(3_000);
    }
    // Every run of a killed worker must have been taken over by the time the load drained; give
    // the last kill's runs their lease time.
    await sleep(8_000);
    const perRun: number[] = [];
    let notResumed = 0;
    let finishedBeforeKill = 0;
    // A run that its next worker claimed and then lost to the next kill, before any event: its
    // restart counts under that later kill.
    let killedAgain = 0;
    let slowest: { ms: number; id: string } | undefined;
    const killed = new Set<string>();
    for (const [k, kill] of kills.entries()) {
      if (kill.held.length === 0) continue;
      for (const id of kill.held) killed.add(id);
      const first = await client.query<{ id: string; ts: Date }>(
        `SELECT task_id::text AS id, min(timestamp) AS ts FROM task_events
          WHERE task_id = ANY($1::uuid[]) AND timestamp > $2 GROUP BY 1`,
        [kill.held, new Date(kill.at)],
      );
      const firstById = new Map(first.rows.map((r) => [r.id, r.ts.getTime()]));
      const before = await client.query<{ id: string }>(
        `SELECT id::text FROM tasks WHERE id = ANY($1::uuid[]) AND completed_at <= $2`,
        [kill.held, new Date(kill.at)],
      );
      const doneBefore = new Set(before.rows.map((r) => r.id));
      for (const id of kill.held) {
        const ts = firstById.get(id);
        if (ts !== undefined && kills.slice(k + 1).some((later) => later.at < ts && later.held.includes(id)))
          killedAgain++;
        else if (ts !== undefined) {
          perRun.push(ts - kill.at);
          if (ts - kill.at > (slowest?.ms ?? -1)) slowest = { ms: ts - kill.at, id };
        } else if (doneBefore.has(id)) finishedBeforeKill++;
        else notResumed++;
      }
    }
    // Runs resumed (ERROR_RECOVERY) that no kill took from their worker: redelivered while alive.
    const resumed = await client.query<{ id: string }>(
      `SELECT DISTINCT task_id::text AS id FROM task_events WHERE type = 'ERROR_RECOVERY'
         AND (event::jsonb->'data'->>'recovery_action') = 'resume_from_checkpoint'`,
    );
    const needless = resumed.rows.filter((r) => !killed.has(r.id)).length;
    await client.end();
    perRun.sort((a, b) => a - b);
    const pct = (p: number) => perRun[Math.min(perRun.length - 1, Math.floor(perRun.length * p))] ?? 0;
    const over5s = perRun.filter((ms) => ms > 5_000).length;
    return {
      recoveryMs: perRun.length > 0 ? perRun[perRun.length - 1]! : null,
      notes: [
        `${kills.length} kills; ${perRun.length} runs of killed workers restarted elsewhere: median ${pct(0.5)} ms, p95 ${pct(0.95)} ms, max ${perRun.at(-1) ?? "-"} ms, over 5 s: ${over5s}; not restarted: ${notResumed}; finished as the kill came: ${finishedBeforeKill}; taken by a worker killed before its first event (counted under that kill): ${killedAgain}`,
        `runs resumed from checkpoints that no kill took from their worker (a slow run redelivered): ${needless}`,
        ...(slowest
          ? [
              `slowest restart: ${slowest.ms} ms (task kind ${ctx.load.submissions.find((x) => x.taskId === slowest!.id)?.kind ?? "?"})`,
            ]
          : []),
      ],
    };
  },
};

async function outage(
  ctx: ScenarioContext,
  label: string,
  down: () => Promise<void>,
  up: () => Promise<void>,
  holdMs: number,
) {
  let back = 0;
  const samples = await ctx.readinessDuring(async () => {
    await down();
    ctx.log(`${label}: down`);
    await sleep(holdMs);
  });
  await up();
  back = Date.now();
  ctx.log(`${label}: back`);
  const probeMs = await ctx.probe();
  const recovered = Date.now() - back;
  const notReady = samples.filter((s) => s !== 200).length;
  return {
    recovered,
    notReady,
    samples: samples.length,
    note: `${label}: readiness not 200 in ${notReady}/${samples.length} samples while down (${[...new Set(samples)].join("/")}); probe task ${probeMs} ms`,
  };
}

const natsRestart: Scenario = {
  name: "nats-restart",
  description: "NATS stopped for 5 s (SIGTERM, restarted), then paused with SIGSTOP, under load",
  recoveryMeaning: "worst time from NATS being back until a new task submitted then has completed",
  async fault(ctx) {
    await ctx.accepted(20);
    const server = ctx.sys.nats.servers[0]!;
    const a = await outage(
      ctx,
      "restart",
      () => server.stop(),
      () => server.start(),
      5_000,
    );
    await sleep(3_000);
    const pause = ctx.settings.natsPauseSeconds;
    const b = await outage(
      ctx,
      `SIGSTOP ${pause} s`,
      async () => server.pause(),
      async () => server.resume(),
      pause * 1_000,
    );
    return {
      recoveryMs: Math.max(a.recovered, b.recovered),
      notes: [a.note, b.note],
      figures: {
        restartRecoveryMs: a.recovered,
        restartNotReady: a.notReady,
        restartSamples: a.samples,
        pauseRecoveryMs: b.recovered,
        pauseNotReady: b.notReady,
        pauseSamples: b.samples,
      },
    };
  },
};

const redisRestart: Scenario = {
  name: "redis-restart",
  description:
    "Redis SIGKILLed (no persistence: every key lost) and restarted after 3 s; the first 20 submissions are repeated with their keys",
  recoveryMeaning: "time from Redis being back until a new task submitted then has completed",
  async fault(ctx) {
    await ctx.accepted(20);
    const o = await outage(
      ctx,
      "redis",
      () => ctx.sys.redis.stop("SIGKILL"),
      () => ctx.sys.redis.start(),
      3_000,
    );
    // Idempotency after the data loss: a repeated key must return the same task.
    let replayed = 0;
    let misses = 0;
    const early = ctx.load.submissions.filter((s) => s.taskId).slice(0, 20);
    for (const s of early) {
      const res = await fetch(`${ctx.sys.env.baseUrl}/tasks`, {
        method: "POST",
        headers: { "X-API-Key": ctx.sys.apiKey, "Content-Type": "application/json", "Idempotency-Key": s.key },
        body: JSON.stringify(taskBody(s)),
      });
      const body = (await res.json()) as { task_id?: string };
      if (res.ok && body.task_id === s.taskId) replayed++;
      else misses++;
    }
    return {
      recoveryMs: o.recovered,
      notes: [o.note, `repeated keys after the data loss: ${replayed} replayed the same task, ${misses} did not`],
    };
  },
};

const postgresRestart: Scenario = {
  name: "postgres-restart",
  description: "PostgreSQL stopped (fast shutdown: every connection cut) and restarted after 5 s, under load",
  recoveryMeaning: "time from PostgreSQL being back until a new task submitted then has completed",
  async fault(ctx) {
    await ctx.accepted(20);
    const o = await outage(
      ctx,
      "postgres",
      () => ctx.sys.postgres.stop(),
      () => ctx.sys.postgres.start(),
      5_000,
    );
    return { recoveryMs: o.recovered, notes: [o.note] };
  },
};

// A crash of PostgreSQL, not a shutdown: one backend SIGKILLed makes the postmaster end every
// other process and recover from the WAL on disk, so what was only in its memory is gone. A claim
// commits without waiting for the WAL flush (docs/decisions.md "The claim does not wait for the
// disk"), so the crash is timed to catch claims not yet written out: the WAL writer is held back
// and the kill waits for a moment with a fresh claim and unflushed WAL.
const CRASHES = 3;
const postgresCrash: Scenario = {
  name: "postgres-crash",
  description: `PostgreSQL crashed ${CRASHES} times under load (one backend SIGKILLed: every connection ends and the server recovers from the WAL), each right after a claim, with the WAL writer held back`,
  recoveryMeaning: "worst time from a crash until a new task submitted then has completed",
  system: { postgresSettings: { wal_writer_delay: "10000" } },
  async fault(ctx) {
    await ctx.accepted(20);
    let worst = 0;
    let lostClaims = 0;
    let caught = 0;
    let backMs = 0;
    const notes: string[] = [];
    for (let i = 0; i < CRASHES; i++) {
      const crash = await crashAfterClaim(ctx.sys.databaseUrl);
      if (crash.unflushed) caught++;
      const back = await untilPostgresAnswers(ctx.sys.databaseUrl);
      backMs = Math.max(backMs, back - crash.at);
      // A claim lost with the crash left its task QUEUED with the attempt undone; the run that
      // held it is stopped by the lease fence and its message claimed again (lease 3 s).
      const lost = await lostOf(ctx.sys.databaseUrl, crash.fresh);
      lostClaims += lost;
      await ctx.probe();
      const recovered = Date.now() - crash.at;
      worst = Math.max(worst, recovered);
      notes.push(
        `crash ${i + 1}: ${crash.unflushed ? `${crash.fresh.length} claims not yet flushed, ${lost} of them lost` : "no claim caught unflushed in 10 s"}; answering after ${back - crash.at} ms, a new task completed after ${recovered} ms`,
      );
      await sleep(2_000);
    }
    return {
      recoveryMs: worst,
      notes,
      figures: { crashes: CRASHES, caughtUnflushed: caught, lostClaims, backMs },
    };
  },
};

interface Crash {
  at: number;
  /** Tasks claimed since the poll before the crash, with the attempt their claim counted. */
  fresh: { id: string; attempts: number }[];
  /** Whether the WAL held records not yet flushed when the crash came. */
  unflushed: boolean;
}

/**
 * Polls until a claim becomes visible whose commit record cannot have been flushed yet (the WAL
 * flushed only up to a position older than the last poll, before which the claim was not visible),
 * then kills the polling backend at once. After 10 s it kills anyway.
 */
async function crashAfterClaim(url: string): Promise<Crash> {
  const client = new pg.Client({ connectionString: url });
  client.on("error", () => undefined);
  await client.connect();
  const { rows } = await client.query<{ pid: number }>("SELECT pg_backend_pid() AS pid");
  const pid = rows[0]!.pid;
  const until = Date.now() + 10_000;
  type Poll = { inserted: string; unflushed: boolean; fresh: { id: string; attempts: number }[] };
  let seen = new Set<string>();
  let lastInserted: string | undefined;
  let caught: Poll | undefined;
  for (;;) {
    const res = await client.query<Poll>(
      `SELECT pg_current_wal_insert_lsn()::text AS inserted,
              $1::pg_lsn IS NOT NULL AND pg_current_wal_flush_lsn() < $1::pg_lsn AS unflushed,
              coalesce(json_agg(json_build_object('id', id, 'attempts', attempts))
                FILTER (WHERE started_at > now() - interval '50 milliseconds'), '[]') AS fresh
         FROM tasks WHERE status = 'RUNNING'`,
      [lastInserted ?? null],
    );
    const poll = res.rows[0]!;
    const claimedSince = poll.fresh.filter((f) => !seen.has(f.id));
    if ((poll.unflushed && claimedSince.length > 0) || Date.now() > until) {
      caught = { ...poll, fresh: poll.unflushed ? claimedSince : [] };
      break;
    }
    seen = new Set(poll.fresh.map((f) => f.id));
    lastInserted = poll.inserted;
  }
  const at = Date.now();
  process.kill(pid, "SIGKILL");
  await client.end().catch(() => undefined);
  return { at, fresh: caught.fresh, unflushed: caught.unflushed };
}

/** How many of the claims seen just before a crash it undid (read before a redelivery can claim again). */
async function lostOf(url: string, fresh: { id: string; attempts: number }[]): Promise<number> {
  if (fresh.length === 0) return 0;
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const { rows } = await client.query<{ id: string; attempts: number }>(
      `SELECT id::text, attempts FROM tasks WHERE id = ANY($1::uuid[])`,
      [fresh.map((f) => f.id)],
    );
    const now = new Map(rows.map((r) => [r.id, r.attempts]));
    return fresh.filter((f) => (now.get(f.id) ?? 0) < f.attempts).length;
  } finally {
    await client.end();
  }
}

// Rolling restart: what a Kubernetes rollout does to every Deployment (maxUnavailable 0), one
// instance at a time: start the replacement, take the old one out of the router (the
// Service's endpoints), SIGTERM it and let it drain. Two instances of everything; the gateways
// reach both orchestrators through one gRPC target (round robin over ready backends), as they
// do through a headless Service in the cluster.
interface Routed {
  definition: ServiceDefinition;
  service: RunningService;
}
const rolling = {
  orchestrators: [] as RunningService[],
  routed: [] as Routed[],
  gatewayEnv: {} as Record<string, string>,
};
async function untilReady(service: RunningService): Promise<void> {
  const end = Date.now() + 30_000;
  while (Date.now() < end) {
    const res = await fetch(`${service.url}/readiness`, { signal: AbortSignal.timeout(3_000) }).catch(() => undefined);
    if (res?.status === 200) return;
    await sleep(100);
  }
  throw new Error(`${service.name} not ready in 30 s`);
}
const definitionOf = (name: string) => SERVICES.find((d) => d.name === name)!;

const rollingRestart: Scenario = {
  name: "rolling-restart",
  description:
    "two instances each of gateway, stream, orchestrator and worker; each instance in turn replaced (SIGTERM after its replacement is up), under load, with CHAOS_ROLLING_SUBSCRIBERS stream subscribers",
  recoveryMeaning: "longest single replacement (replacement ready to old instance exited)",
  system: { replicas: { gateway: 1, stream: 2, worker: 2 } },
  async prepare(sys) {
    const first = sys.env.service("orchestrator");
    const second = await sys.startInstance("orchestrator", { port: await freePort() });
    rolling.orchestrators = [first, second];
    rolling.gatewayEnv = {
      ORCHESTRATOR_ADDRESS: `ipv4:${rolling.orchestrators.map((o) => `127.0.0.1:${o.port}`).join(",")}`,
    };
    const gateways = await Promise.all([0, 1].map(() => sys.startInstance("gateway", { env: rolling.gatewayEnv })));
    await Promise.all(gateways.map(untilReady));
    rolling.routed = [
      ...gateways.map((service) => ({ definition: definitionOf("gateway"), service })),
      ...[0, 1].map((i) => ({ definition: definitionOf("stream"), service: sys.env.service("stream", i) })),
    ];
    sys.env.stack.router.setRoutes(routesFor(rolling.routed));
    await sys.env.service("gateway").stop(10_000);
  },
  async fault(ctx) {
    await ctx.accepted(20);
    // Stream subscribers of the load's recent tasks for the whole rollout: a stream instance's
    // SIGTERM ends its streams and they resume on another with their last id.
    const accepted = () => ctx.load.submissions.filter((s) => s.taskId);
    const subscribers = keepFollowing({
      baseUrl: ctx.sys.env.baseUrl,
      apiKey: ctx.sys.apiKey,
      count: ctx.settings.rollingSubscribers,
      pick: () => {
        const recent = accepted().slice(-20);
        return recent[Math.floor(Math.random() * recent.length)]?.taskId;
      },
      timeoutMs: 120_000,
    });
    await sleep(2_000);
    const times: number[] = [];
    const byService: Record<string, number[]> = {};
    const replace = async (label: string, start: () => Promise<RunningService>, stopOld: () => Promise<void>) => {
      const replacement = await start();
      const t = Date.now();
      await stopOld();
      times.push(Date.now() - t);
      const service = label.split(" ")[0]!;
      (byService[service] ??= []).push(Date.now() - t);
      ctx.log(`${label} replaced by ${replacement.name}`);
      return replacement;
    };
    // Workers: SIGTERM hands the runs back; the other worker takes them at once.
    for (const old of ctx.sys.workers.filter((w) => w.isRunning)) {
      await replace(
        `worker ${old.name}`,
        () => ctx.sys.addWorker(),
        async () => void (await old.stop(30_000)),
      );
    }
    // Routed services: the new instance joins the routes, the old one leaves them, then drains.
    for (const name of ["stream", "gateway"]) {
      for (const old of rolling.routed.filter((r) => r.definition.name === name)) {
        await replace(
          `${name} ${old.service.name}`,
          async () => {
            const service = await ctx.sys.startInstance(name, { env: name === "gateway" ? rolling.gatewayEnv : {} });
            // As a Service adds an endpoint only once its readiness probe passes.
            await untilReady(service);
            rolling.routed = [...rolling.routed.filter((r) => r !== old), { definition: old.definition, service }];
            ctx.sys.env.stack.router.setRoutes(routesFor(rolling.routed));
            return service;
          },
          async () => {
            // In-flight requests routed to it just before finish there; new ones go elsewhere.
            await sleep(200);
            await old.service.stop(30_000);
          },
        );
      }
    }
    // Orchestrators: replaced in place (same port: the gRPC target stays valid); the gateways'
    // round robin uses the other one meanwhile.
    for (const [i, old] of rolling.orchestrators.entries()) {
      const t = Date.now();
      await old.stop(30_000);
      rolling.orchestrators[i] = await ctx.sys.startInstance("orchestrator", { port: old.port! });
      times.push(Date.now() - t);
      (byService.orchestrator ??= []).push(Date.now() - t);
      ctx.log(`orchestrator on port ${old.port} restarted`);
      // minReadySeconds: the gateways reconnect (back-off at most 2 s) before the next one goes.
      await sleep(3_000);
    }
    const streams = await verifyStreams(ctx.sys.databaseUrl, await subscribers.stop());
    const perService = Object.entries(byService)
      .map(([name, ms]) => `${name} ${ms.map((x) => (x / 1000).toFixed(1)).join(" + ")} s`)
      .join(", ");
    return {
      recoveryMs: Math.max(...times),
      notes: [
        `${times.length} replacements (SIGTERM to exit; orchestrators: stop to restarted): ${perService}`,
        `${ctx.settings.rollingSubscribers} stream subscribers: ${describeStreams(streams)}`,
      ],
      streams,
    };
  },
};

// Overload: offered load at 3× what the workers complete. The run queue is bounded
// (RUNS_MAX_PENDING): beyond it submits are shed with 503 + Retry-After; nothing else grows.
const OVERLOAD_SECONDS = 60;
const overloadState = { capacity: 0 };
const overload: Scenario = {
  name: "overload-3x",
  description: `offered load at 3× the measured capacity for ${OVERLOAD_SECONDS} s; 2 workers × 4 runs, RUNS_MAX_PENDING=60`,
  recoveryMeaning: "time from the end of the offered load until the backlog drained (every accepted task terminal)",
  system: {
    // nginx where installed, as under `npm start`: the Node router would run inside this process,
    // beside the load client and its retries (docs/reliability.md "Overload").
    router: "auto",
    replicas: { worker: 2 },
    env: { RUNS_MAX_PENDING: "60" },
    services: { worker: { WORKER_CONCURRENCY: "4", OFFLINE_CHUNK_DELAY_MS: "20" } },
  },
  async prepare(sys) {
    // Capacity: simple tasks completed per second with the queue kept full.
    const headers = { "X-API-Key": sys.apiKey, "Content-Type": "application/json" };
    const ids = await Promise.all(
      Array.from({ length: 40 }, async () => {
        const res = await fetch(`${sys.env.baseUrl}/tasks`, {
          method: "POST",
          headers,
          body: JSON.stringify({ query: "Say hello", mode: "simple" }),
        });
        return ((await res.json()) as { task_id: string }).task_id;
      }),
    );
    sys.ownTaskIds.push(...ids);
    const started = Date.now();
    const client = new pg.Client({ connectionString: sys.databaseUrl });
    await client.connect();
    for (;;) {
      const done = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) AND completed_at IS NOT NULL`,
        [ids],
      );
      if (done.rows[0]!.n >= ids.length) break;
      await sleep(100);
    }
    await client.end();
    overloadState.capacity = ids.length / ((Date.now() - started) / 1_000);
  },
  load() {
    const rate = Math.max(3, Math.round(overloadState.capacity * 3));
    return { tasks: rate * OVERLOAD_SECONDS, rate };
  },
  async fault(ctx) {
    const rss = new Map<string, number>();
    let maxPending = 0;
    const { connectBus } = await import("@tog/bus");
    const { createLogger } = await import("@tog/core");
    const bus = await connectBus({
      url: ctx.sys.nats.url,
      name: "chaos",
      prefix: ctx.sys.env.natsPrefix,
      logger: createLogger({ service: "chaos", level: "silent" }),
    });
    let loadDone = false;
    const loadEnded = ctx.load.submitted.then(() => {
      loadDone = true;
      return Date.now();
    });
    while (!loadDone) {
      const info = await bus.jsm.streams.info(bus.streamName("RUNS")).catch(() => undefined);
      maxPending = Math.max(maxPending, info?.state.messages ?? 0);
      for (const s of [...ctx.sys.env.stack.services, ...ctx.sys.instances].filter((x) => x.isRunning)) {
        const kb = Number(
          /VmRSS:\s+(\d+)/.exec(
            await import("node:fs").then((fs) => fs.readFileSync(`/proc/${s.pid}/status`, "utf8")).catch(() => ""),
          )?.[1] ?? 0,
        );
        const name = s.name.replace(/[#*].*/, "");
        rss.set(name, Math.max(rss.get(name) ?? 0, kb));
      }
      await sleep(500);
    }
    await bus.close();
    const ended = await loadEnded;
    // Backlog drained: every accepted task terminal.
    const client = new pg.Client({ connectionString: ctx.sys.databaseUrl });
    await client.connect();
    const ids = ctx.load.submissions.flatMap((s) => (s.taskId ? [s.taskId] : []));
    for (;;) {
      const open = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tasks WHERE id = ANY($1::uuid[]) AND completed_at IS NULL`,
        [ids],
      );
      if (open.rows[0]!.n === 0 || Date.now() - ended > 180_000) break;
      await sleep(250);
    }
    await client.end();
    const drained = Date.now() - ended;
    const mem = [...rss.entries()].map(([n, kb]) => `${n} ${Math.round(kb / 1024)} MiB`).join(", ");
    return {
      recoveryMs: drained,
      notes: [
        `capacity ≈ ${overloadState.capacity.toFixed(1)} tasks/s, offered ${Math.round(overloadState.capacity * 3)}/s`,
        `RUNS messages peak ${maxPending} (bound 60)`,
        `peak RSS: ${mem}`,
        ctx.sys.env.stack.routerKind === "nginx"
          ? "router: nginx (an upstream it could not reach is answered 502, a failed request)"
          : `router upstream errors: ${[...ctx.sys.env.routerErrors].map(([k, n]) => `${k} ×${n}`).join("; ") || "none"}`,
      ],
    };
  },
};

// Rate limits across two gateways: one API key sends twice its per-minute limit, alternating
// between the gateways, inside one window; the allowed count must match the limit (±5 %).
const RATE_RPM = 300;
const rateLimits: Scenario = {
  name: "rate-limits-2-gateways",
  description: `two gateways, RATE_LIMIT_RPM=${RATE_RPM}; one key sends ${RATE_RPM * 2} requests alternating between them within a minute`,
  recoveryMeaning: "not applicable",
  system: { replicas: { gateway: 2 }, env: { RATE_LIMIT_RPM: String(RATE_RPM), RATE_LIMIT_BURST: "1000" } },
  load: () => ({ tasks: 20, rate: 2 }),
  async fault(ctx) {
    // A key of its own: the load's key has other counters.
    const key = (await ctx.sys.env.createApiKey({ user: "chaos@example.com", name: "rate" })).key;
    const gateways = [0, 1].map((i) => `${ctx.sys.env.service("gateway", i).url}/api/v1`);
    let allowed = 0;
    let limited = 0;
    let other = 0;
    const total = RATE_RPM * 2;
    for (let sent = 0; sent < total; sent += 20) {
      await Promise.all(
        Array.from({ length: 20 }, async (_, j) => {
          const res = await fetch(`${gateways[(sent + j) % 2]}/tasks/00000000-0000-4000-8000-000000000000`, {
            headers: { "X-API-Key": key },
          });
          await res.arrayBuffer();
          if (res.status === 429) limited++;
          else if (res.status === 404) allowed++;
          else other++;
        }),
      );
    }
    const deviation = ((allowed - RATE_RPM) / RATE_RPM) * 100;
    return {
      recoveryMs: null,
      figures: { allowed, limit: RATE_RPM, other },
      notes: [
        `allowed ${allowed} of ${total} (limit ${RATE_RPM}: ${deviation >= 0 ? "+" : ""}${deviation.toFixed(1)} %), 429: ${limited}, other: ${other}`,
      ],
    };
  },
};

// A 3-server JetStream cluster with every stream replicated 3 times (NATS_STREAM_REPLICAS=3):
// one server is SIGKILLed under load and restarted 15 s later.
const natsCluster: Scenario = {
  name: "nats-cluster-r3",
  description: "3 NATS servers, streams R3; one server SIGKILLed under load, back after 15 s",
  recoveryMeaning: "time from the kill until a task submitted right after it has completed",
  system: { natsServers: 3 },
  async fault(ctx) {
    await ctx.accepted(20);
    const { connectBus } = await import("@tog/bus");
    const { createLogger } = await import("@tog/core");
    const bus = await connectBus({
      url: ctx.sys.nats.url,
      name: "chaos",
      prefix: ctx.sys.env.natsPrefix,
      logger: createLogger({ service: "chaos", level: "silent" }),
    });
    const replicas = await Promise.all(
      ["RUNS", "EVENTS"].map(
        async (n) => `${n} R${(await bus.jsm.streams.info(bus.streamName(n))).config.num_replicas}`,
      ),
    );
    await bus.close();
    const victim = ctx.sys.nats.servers[1]!;
    const killed = Date.now();
    await victim.stop("SIGKILL");
    ctx.log(`SIGKILL ${victim.name}`);
    await ctx.probe();
    const recovered = Date.now() - killed;
    await sleep(Math.max(0, 15_000 - recovered));
    await victim.start();
    ctx.log(`${victim.name} back`);
    return { recoveryMs: recovered, notes: [`streams ${replicas.join(", ")}`, `${victim.name} down for 15 s`] };
  },
};

// Stream instance killed: CHAOS_STREAM_SUBSCRIBERS SSE and WebSocket subscribers (as applications
// write them: reconnect with the last id seen) of long tasks, spread over two stream instances by
// the router; once every subscriber is streaming, one instance is SIGKILLed and leaves the
// router, as a dead pod leaves the Service.
const SUBSCRIBERS_PER_STREAM_TASK = 20;
const streamKill: Scenario = {
  name: "stream-instance-kill",
  description:
    "two stream instances, CHAOS_STREAM_SUBSCRIBERS subscribers (half SSE, half WebSocket; 20 per long task); one instance SIGKILLed mid-stream",
  recoveryMeaning:
    "longest time from the kill until a subscriber it cut opened the connection that resumed its stream on the other instance",
  system: { replicas: { stream: 2 }, services: { worker: { OFFLINE_CHUNK_DELAY_MS: "1500" } } },
  // The streamed tasks are the load (slow on purpose: 1.5 s per chunk).
  load: () => ({ tasks: 0, rate: 1 }),
  async fault(ctx) {
    const subscribers = ctx.settings.streamSubscribers;
    const taskCount = Math.max(1, Math.ceil(subscribers / SUBSCRIBERS_PER_STREAM_TASK));
    const headers = { "X-API-Key": ctx.sys.apiKey, "Content-Type": "application/json" };
    const tasks = await Promise.all(
      Array.from({ length: taskCount }, async () => {
        const res = await fetch(`${ctx.sys.env.baseUrl}/tasks`, {
          method: "POST",
          headers,
          body: JSON.stringify({ query: "Write a long essay about the history of computing", mode: "simple" }),
        });
        return ((await res.json()) as { task_id: string }).task_id;
      }),
    );
    for (const taskId of tasks)
      ctx.load.submissions.push({ kind: "simple", key: taskId, taskId, attempts: 1, submittedAt: Date.now() });
    const started = Date.now();
    const followers = Array.from({ length: subscribers }, (_, i) =>
      follow({
        baseUrl: ctx.sys.env.baseUrl,
        apiKey: ctx.sys.apiKey,
        taskId: tasks[i % taskCount]!,
        transport: i % 2 === 0 ? "sse" : "ws",
        timeoutMs: 180_000,
      }),
    );
    // Mid-stream, every subscriber connected: the answers take ~40 s at 1.5 s per chunk; opening
    // 1,000 connections on a small machine takes a few seconds.
    await sleep(Math.max(5_000, subscribers * 10));
    const victim = ctx.sys.env.service("stream", 0);
    const killedAt = Date.now();
    await victim.kill();
    const survivor = ctx.sys.env.service("stream", 1);
    ctx.sys.env.stack.router.setRoutes(
      routesFor([
        ...ctx.sys.env.stack.services
          .filter((x) => /^gateway(#\d+)?$/.test(x.name))
          .map((service) => ({ definition: definitionOf("gateway"), service })),
        { definition: definitionOf("stream"), service: survivor },
      ]),
    );
    ctx.log(
      `SIGKILL ${victim.name} ${Math.round((killedAt - started) / 1000)} s after the subscribers started; routes now to ${survivor.name}`,
    );
    const results = await Promise.all(followers);
    const v = await verifyStreams(ctx.sys.databaseUrl, results);
    const reconnects = resumeTimes(results, killedAt);
    return {
      recoveryMs: reconnects.at(-1) ?? null,
      notes: [
        describeStreams(v),
        `${subscribers} subscribers of ${taskCount} tasks; killed ${Math.round((killedAt - started) / 1000)} s after they started; reconnect after the kill: median ${reconnects[Math.floor(reconnects.length / 2)] ?? "-"} ms, max ${reconnects.at(-1) ?? "-"} ms`,
      ],
      streams: v,
    };
  },
};

export const SCENARIOS: Scenario[] = [
  workerKills,
  natsRestart,
  redisRestart,
  postgresRestart,
  postgresCrash,
  rollingRestart,
  overload,
  rateLimits,
  natsCluster,
  streamKill,
];
