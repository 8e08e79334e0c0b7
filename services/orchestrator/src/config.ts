import { z } from "zod";
import { baseConfigShape, envInt, loadConfig, type ConfigShape, type Env } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { busConfigShape } from "@tog/bus";
import { catalogConfigShape } from "@tog/catalog";
import { llmRouterConfigShape } from "@tog/providers";
import { toolsConfigShape } from "@tog/tools";
import { eventsConfigShape } from "./events/config.ts";
import { opsConfigShape } from "@tog/ops";
import { orchestratorServerTlsConfigShape } from "@tog/proto";

/** What running tasks needs beyond the shared settings (a worker process, or the orchestrator with ORCHESTRATOR_WORKER=on). */
const runTasksConfigShape = {
  ...llmRouterConfigShape,
  AGENT_TIMEOUT_SECONDS: envInt(600, 1).describe(
    "A run still going after this long (from its first start) ends as TIMEOUT.",
  ),
  APPROVAL_TIMEOUT_SECONDS: envInt(3_600, 1).describe(
    "How long a task waits for a human approval decision before it counts as timed out.",
  ),
  WORKER_CONCURRENCY: envInt(64, 1, 10_000).describe("Runs one worker process executes at once."),
  RUN_LEASE_MS: envInt(3_000, 500).describe(
    "Lease a worker holds on a running task, renewed at a third of it (one statement per worker process for all its runs); a crashed worker's task can be taken over once it lapses.",
  ),
  MAX_TOOL_ITERATIONS: envInt(8, 1, 100).describe(
    "Tool-calling rounds an agent may take before it must answer (standard mode).",
  ),
  EVENT_MESSAGES: z
    .enum(["per-write", "per-event"])
    .default("per-write")
    .describe(
      'per-write: the events of one write go out as one NATS message. per-event: one message per event, for an upgrade while stream services or event persisters of an earlier release still run (docs/decisions.md "One message per write").',
    ),
} satisfies ConfigShape;

/** What both processes of this package read: logging, ops port, PostgreSQL, NATS, the catalog, tools. */
const processConfigShape = {
  ...baseConfigShape,
  ...opsConfigShape,
  ...dbConfigShape,
  ...busConfigShape,
  ...catalogConfigShape,
  ...toolsConfigShape,
} satisfies ConfigShape;

/** A worker process: pulls runs and executes tasks. */
export const workerConfigShape = {
  ...processConfigShape,
  ...runTasksConfigShape,
} satisfies ConfigShape;

export type WorkerConfig = z.infer<z.ZodObject<typeof workerConfigShape>>;

/** The orchestrator process: gRPC API, event persister, retention purge, and with ORCHESTRATOR_WORKER=on a worker. */
export const orchestratorConfigShape = {
  ...processConfigShape,
  ...eventsConfigShape,
  ...runTasksConfigShape,
  PORT: envInt(50051, 0, 65_535).describe("Orchestrator gRPC port (internal only)."),
  HOST: z.string().min(1).default("0.0.0.0").describe("Orchestrator gRPC listen address."),
  ...orchestratorServerTlsConfigShape,
  ORCHESTRATOR_MAX_IN_FLIGHT: envInt(256, 0).describe(
    'gRPC calls this orchestrator works on at once; beyond it a call is refused at once (the gateway answers 503 + Retry-After) rather than queueing for the database pool past its deadline (docs/reliability.md "Overload"). 0: no bound.',
  ),
  SESSION_TOKEN_BUDGET: envInt(1_000_000, 1).describe(
    "Token budget of a new session (tokens all its tasks may use together).",
  ),
  ORCHESTRATOR_WORKER: z
    .enum(["on", "off"])
    .default("off")
    .describe(
      "on: this process also runs tasks, as a worker process would (the WORKER_* and run settings apply; its own database pool of DATABASE_POOL_MAX). One process fewer on a task's path on a single machine; `npm start` sets it unless START_WORKER_PROCESSES > 0 (docs/decisions.md \"The worker in the orchestrator's process\").",
    ),
  EVENT_PERSISTER: z
    .enum(["on", "off"])
    .default("off")
    .describe(
      'on: this process also copies events from the bus into the permanent log. Workers log every event themselves before publishing it (docs/performance.md "The log before the bus"); needed only while workers of an earlier release still run.',
    ),
} satisfies ConfigShape;

export type OrchestratorConfig = z.infer<z.ZodObject<typeof orchestratorConfigShape>>;

export const loadOrchestratorConfig = (env: Env): OrchestratorConfig => loadConfig(orchestratorConfigShape, env);
export const loadWorkerConfig = (env: Env): WorkerConfig => loadConfig(workerConfigShape, env);
