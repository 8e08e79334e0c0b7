// What runs tasks: the run worker and everything a run needs (model router, tools, session
// memory and budgets, cancel/approval signals). A worker process (worker.ts) starts it on its
// own; the orchestrator starts it in its own process with ORCHESTRATOR_WORKER=on, which takes
// one process off a task's path on a single machine (docs/decisions.md "The worker in the
// orchestrator's process").
import { hostname } from "node:os";
import { randomBytes } from "node:crypto";
import type { Bus } from "@tog/bus";
import type { Catalog } from "@tog/catalog";
import type { Logger } from "@tog/core";
import type { Db, DbPool } from "@tog/db";
import type { Metrics } from "@tog/ops";
import { createLlmRouter, llmRouterSettings } from "@tog/providers";
import { builtinTools, createToolRegistry } from "@tog/tools";
import type { WorkerConfig } from "./config.ts";
import { taskFlow } from "./flows/index.ts";
import { workerMetrics } from "./metrics.ts";
import { ApprovalRepository } from "./runtime/approval.repository.ts";
import type { LocalSubmits } from "./runtime/local-submits.ts";
import { RunRepository } from "./runtime/run.repository.ts";
import { startRunWorker, type RunWorker } from "./runtime/run-worker.ts";
import { createSignalListener } from "./runtime/signal-listener.ts";
import { budgetedRouter, SessionBudgets } from "./sessions/session-budget.ts";
import { contextWindowOf, sessionContextLoader } from "./sessions/session-context.ts";
import { SessionMemory } from "./sessions/session-memory.ts";

export interface WorkerRuntimeOptions {
  config: WorkerConfig;
  /** Provider keys by variable name, as the catalog's providers name them. */
  apiKeys: Record<string, string | undefined>;
  catalog: Catalog;
  bus: Bus;
  /** The worker's own pool: claims, checkpoints, final writes and lease renewals never wait for submits. */
  db: Db;
  pool: DbPool;
  metrics: Metrics;
  logger: Logger;
  /** The submits open in this process, when it accepts them too (the orchestrator). */
  localSubmits?: LocalSubmits | undefined;
}

/** Starts pulling runs; `stop()` of the result hands running tasks back (graceful shutdown's intake step). */
export async function startWorkerRuntime(options: WorkerRuntimeOptions): Promise<RunWorker> {
  const { config, catalog, bus, db, pool, logger } = options;
  const llm = createLlmRouter({ catalog, apiKeys: options.apiKeys, logger, ...llmRouterSettings(config) });
  const tools = createToolRegistry(builtinTools({ httpFetch: { allowedHosts: config.TOOL_HTTP_FETCH_ALLOWED_HOSTS } }));
  let worker: RunWorker | undefined;
  const series = workerMetrics(options.metrics, () => worker?.active ?? 0);
  const workerId = `${hostname()}:${process.pid}:${randomBytes(3).toString("hex")}`;
  const budgets = new SessionBudgets({ pool });
  const memory = new SessionMemory({ pool, contextWindow: contextWindowOf(llm, catalog), logger });
  worker = await startRunWorker({
    bus,
    onRunEnd: series.onRunEnd,
    concurrency: config.WORKER_CONCURRENCY,
    ackWaitMs: config.RUN_ACK_WAIT_SECONDS * 1_000,
    logger,
    runner: {
      bus,
      signals: createSignalListener(bus),
      runs: new RunRepository({ db, pool, localSubmits: options.localSubmits }),
      approvals: new ApprovalRepository({ db }),
      llm,
      tools,
      catalog,
      settings: {
        approvalThreshold: config.TOOL_APPROVAL_THRESHOLD,
        approvalTimeoutSeconds: config.APPROVAL_TIMEOUT_SECONDS,
        maxToolIterations: config.MAX_TOOL_ITERATIONS,
        llmMaxRetries: config.LLM_MAX_RETRIES,
      },
      task: taskFlow,
      logger,
      workerId,
      leaseMs: config.RUN_LEASE_MS,
      timeoutSeconds: config.AGENT_TIMEOUT_SECONDS,
      loadSessionHistory: sessionContextLoader({ memory, budgets }),
      routerFor: (task, router) => budgetedRouter(router, budgets, task),
      onEventPublished: series.onEventPublished,
      onTaskFinished: series.onTaskFinished,
      eventsMaxAgeMs: config.EVENTS_MAX_AGE_SECONDS * 1_000,
      eventMessages: config.EVENT_MESSAGES,
    },
  });
  logger.info(
    { workerId, concurrency: config.WORKER_CONCURRENCY, offlineOnly: llm.offlineOnly },
    "worker pulling runs",
  );
  return worker;
}
