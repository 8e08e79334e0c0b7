import { randomUUID } from "node:crypto";
import { expect } from "vitest";
import { createLogger } from "@tog/core";
import { eventTextsOf } from "@tog/events";
import { createDbClient, createDbPool, type Db, type DbPool } from "@tog/db";
import type { Bus } from "@tog/bus";
import type { PoolClient } from "pg";
import { loadCatalog } from "@tog/catalog";
import { createLlmRouter } from "@tog/providers";
import { builtinTools, createToolRegistry } from "@tog/tools";
import { createTestDatabase, deleteStreamsOf, openTestBus, provisionTestBus, type TestDatabase } from "@tog/testkit";
import { buildTimeline, createEventHistoryRepository } from "../../src/events/index.ts";
import { ApprovalRepository } from "../../src/runtime/approval.repository.ts";
import { RunRepository } from "../../src/runtime/run.repository.ts";
import { startRunWorker, type RunWorker } from "../../src/runtime/run-worker.ts";
import { createSignalListener } from "../../src/runtime/signal-listener.ts";
import type { RunnerDeps } from "../../src/runtime/run.ts";
import { pending, type FlowContext, type FlowOutcome, type TaskFlow } from "../../src/runtime/flow-context.ts";
import { TaskService } from "../../src/tasks/task.service.ts";

// Real PostgreSQL and NATS, the real runtime; only the task is the test's own.

export const logger = createLogger({ service: "runtime-test", level: "silent" });

export interface RuntimeHarness {
  db: Db;
  /** The pg pool under `db` (the workers' hot-path repositories use it directly). */
  pool: DbPool;
  /** The test database's URL, for a pool of the test's own. */
  databaseUrl: string;
  bus: Bus;
  service: TaskService;
  userId: string;
  otherUserId: string;
  runs: RunRepository;
  runner(task: TaskFlow, overrides?: Partial<RunnerDeps>): RunnerDeps;
  startWorker(task: TaskFlow, overrides?: Partial<RunnerDeps>): Promise<RunWorker>;
  waitForStatus(taskId: string, statuses: string[], timeoutMs?: number): Promise<string>;
  /** Persisted events of a task (waits until the terminal one is stored). */
  events(
    taskId: string,
    timeoutMs?: number,
  ): Promise<Array<{ seq: number; type: string; agent_id: string; data: Record<string, unknown> }>>;
  close(): Promise<void>;
}

export async function startRuntimeHarness(label: string): Promise<RuntimeHarness> {
  const database: TestDatabase = await createTestDatabase();
  const pool = createDbPool({ databaseUrl: database.url, poolMax: 10 });
  const db = createDbClient({ databaseUrl: database.url, pool });
  const bus = await openTestBus(label);
  await provisionTestBus(bus, { runAckWaitSeconds: 2 });
  // No event persister: the runs themselves put every event into the log before publishing it
  // (docs/performance.md "The log before the bus"), and these tests read the log.
  const history = createEventHistoryRepository({ db });
  const userId = randomUUID();
  const otherUserId = randomUUID();
  await db.$executeRaw`INSERT INTO users (id, name) VALUES (${userId}::uuid, 'runtime-a'), (${otherUserId}::uuid, 'runtime-b')`;
  const catalog = loadCatalog();
  const llm = createLlmRouter({ catalog, apiKeys: {}, logger });
  const tools = createToolRegistry(builtinTools());
  const runs = new RunRepository({ db, pool });
  const workers: RunWorker[] = [];
  const service = new TaskService({
    db,
    pool,
    bus,
    logger,
    sessionTokenBudget: 1_000_000,
    validateSpec: () => undefined,
    listEvents: (q) => history.listEvents(q),
    lastEvent: async (taskId) => (await history.readLast(taskId))?.json ?? null,
    buildTimeline: (q) => buildTimeline({ db, ...q }),
  });

  const signals = createSignalListener(bus);
  const runner = (task: TaskFlow, overrides: Partial<RunnerDeps> = {}): RunnerDeps => ({
    bus,
    signals,
    runs,
    approvals: new ApprovalRepository({ db }),
    llm,
    tools,
    catalog,
    settings: { approvalThreshold: "high", approvalTimeoutSeconds: 30, maxToolIterations: 4 },
    task,
    logger,
    workerId: `w-${randomUUID().slice(0, 8)}`,
    leaseMs: 1_500,
    timeoutSeconds: 60,
    approvalPollMs: 200,
    ...overrides,
  });

  const harness: RuntimeHarness = {
    db,
    pool,
    databaseUrl: database.url,
    bus,
    service,
    userId,
    otherUserId,
    runs,
    runner,
    async startWorker(task, overrides) {
      const worker = await startRunWorker({
        bus,
        runner: runner(task, overrides),
        concurrency: 16,
        ackWaitMs: 2_000,
        logger,
      });
      workers.push(worker);
      return worker;
    },
    async waitForStatus(taskId, statuses, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const task = await service.getTask(userId, taskId).catch(() => service.getTask(otherUserId, taskId));
        if (statuses.includes(task.status)) return task.status;
        if (Date.now() > end) throw new Error(`task ${taskId} still ${task.status}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async events(taskId, timeoutMs = 10_000) {
      const end = Date.now() + timeoutMs;
      for (;;) {
        const page = await history.listEvents({ taskId: taskId, limit: 1_000, offset: 0 });
        const events = page.events.map((e) => JSON.parse(e));
        const last = events.at(-1);
        if (
          last &&
          (last.type === "WORKFLOW_COMPLETED" || (last.type === "ERROR_OCCURRED" && last.data.terminal === true))
        )
          return events;
        if (Date.now() > end) throw new Error(`events of ${taskId} incomplete: ${events.map((e) => e.type).join(",")}`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    async close() {
      await Promise.all(workers.map((w) => w.stop()));
      await deleteStreamsOf(bus);
      await bus.close();
      await db.$disconnect();
      await pool.end();
      await database.drop();
    },
  };
  return harness;
}

export function submitCommand(
  userId: string,
  query: string,
  extra: { sessionId?: string; context?: Record<string, unknown> } = {},
) {
  return { userId, query, sessionId: extra.sessionId, mode: undefined, context: extra.context ?? {}, streaming: false };
}

// Flow pieces the runtime tests share.

export const outcome = (result: string, agentsUsed = 1): FlowOutcome => ({
  result,
  modelUsed: "offline-small",
  provider: "offline",
  usage: { inputTokens: 3, outputTokens: 4, totalTokens: 7, costUsd: 0 },
  agentsUsed,
  toolsInvoked: 0,
  mode: "EXECUTION_MODE_STANDARD",
});

export const started = (ctx: FlowContext) =>
  ctx.step("start", { kind: "start", name: "start" }, async () => ({
    output: null,
    events: [
      pending("WORKFLOW_STARTED", "started", {
        query: ctx.task.spec.query,
        mode: "standard",
        session_id: ctx.task.sessionId,
        estimated_complexity: 0.5,
      }),
    ],
  }));

/** Seqs 1..n and exactly one terminal event, the last. */
export function expectGapFree(events: Array<{ seq: number; type: string; data: Record<string, unknown> }>) {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const terminal = events.filter(
    (e) => e.type === "WORKFLOW_COMPLETED" || (e.type === "ERROR_OCCURRED" && e.data.terminal === true),
  );
  expect(terminal).toHaveLength(1);
  expect(terminal[0]).toBe(events.at(-1));
}

/** A model's answer as its step reports it. */
export const llmOutput = () =>
  pending("LLM_OUTPUT", "a", { output: "A", model: "m", tokens_used: 1, cost_usd: 0, duration_ms: 1 } as never);

/** The agent's lazy finish step (flows/agent.ts), with its AGENT_COMPLETED. */
export const agentFinished = (ctx: FlowContext) =>
  ctx.step("agent:finish", { kind: "finish", name: "agent", lazy: true }, async () => ({
    output: "done",
    events: [
      pending("AGENT_COMPLETED", "agent completed", { result: "A", tokens_used: 1, cost_usd: 0, duration_ms: 1 }),
    ],
  }));

/** Transaction id of each step row of a task, by key: rows written by one statement share it. */
export async function stepWriters(pool: DbPool, taskId: string): Promise<Record<string, string>> {
  const res = await pool.query<{ key: string; xmin: string }>(
    "SELECT key, xmin::text FROM task_steps WHERE task_id = $1",
    [taskId],
  );
  return Object.fromEntries(res.rows.map((r) => [r.key, r.xmin]));
}

/**
 * The bus with its JetStream publishes counted: messages, the most in flight at once, the
 * events they carried and the most in one message (one per line, docs/decisions.md "One message per write").
 */
export function countingBus(bus: Bus): {
  bus: Bus;
  maxInFlight: () => number;
  publishes: () => number;
  eventsPublished: () => number;
  largestMessage: () => number;
} {
  let inFlight = 0;
  let max = 0;
  let count = 0;
  let events = 0;
  let largest = 0;
  const js = new Proxy(bus.js, {
    get(target, prop) {
      if (prop === "publish")
        return async (...args: Parameters<Bus["js"]["publish"]>) => {
          inFlight++;
          count++;
          const data = args[1] ?? "";
          const n = eventTextsOf(typeof data === "string" ? data : Buffer.from(data).toString()).length;
          events += n;
          largest = Math.max(largest, n);
          max = Math.max(max, inFlight);
          try {
            return await target.publish(...args);
          } finally {
            inFlight--;
          }
        };
      const value = Reflect.get(target, prop) as unknown;
      return typeof value === "function" ? (value as (...a: unknown[]) => unknown).bind(target) : value;
    },
  });
  return {
    bus: { ...bus, js },
    maxInFlight: () => max,
    publishes: () => count,
    eventsPublished: () => events,
    largestMessage: () => largest,
  };
}

/**
 * As the submit transaction does: the task's advisory lock, its new session and its QUEUED row,
 * in a transaction left open (the caller commits or rolls back, then releases the client).
 */
export async function openSubmitTransaction(h: RuntimeHarness, taskId: string, query: string): Promise<PoolClient> {
  const client = await h.pool.connect();
  const sessionId = randomUUID();
  await client.query("BEGIN");
  await client.query("SELECT pg_advisory_xact_lock(hashtextextended($1, 0))", [taskId]);
  await client.query("INSERT INTO sessions (id, user_id, token_budget, task_count) VALUES ($1, $2, 1000, 1)", [
    sessionId,
    h.userId,
  ]);
  await client.query(
    `INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id)
     VALUES ($1, $2, $3, $4, 'QUEUED', '{}'::jsonb, 'trace')`,
    [taskId, h.userId, sessionId, query],
  );
  return client;
}
