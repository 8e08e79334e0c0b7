import { z } from "zod";
import { baseConfigShape, envInt } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { redisConfigShape } from "@tog/redis";
import { busConfigShape } from "@tog/bus";
import { authConfigShape } from "@tog/edge";

/** Settings of `npm start` (scripts/start.ts); the services it starts read their own. */
export const startConfigShape = {
  ...baseConfigShape,
  ...dbConfigShape,
  ...redisConfigShape,
  ...busConfigShape,
  PUBLIC_PORT: envInt(8080, 0, 65_535).describe(
    "`npm start`: port of the public router in front of the services (`/api/v1/*`).",
  ),
  PUBLIC_HOST: z.string().min(1).default("0.0.0.0").describe("`npm start`: listen address of the public router."),
  PUBLIC_ROUTER: z
    .enum(["auto", "nginx", "node"])
    .default("auto")
    .describe(
      "`npm start`: the public router - auto: nginx when installed (a fraction of the Node router's cost per request), else the Node router; nginx; node (docs/decisions.md, nginx on the public port).",
    ),
  START_LOG_FORMAT: z
    .enum(["auto", "pretty", "json"])
    .default("auto")
    .describe(
      "`npm start`: how service logs are shown - auto: readable (pino-pretty) on a terminal, JSON lines otherwise.",
    ),
  AUTH_TOKEN_SECRET: authConfigShape.AUTH_TOKEN_SECRET,
  START_WORKER_PROCESSES: envInt(0, 0, 64).describe(
    "`npm start`: worker processes beside the orchestrator. 0: the orchestrator runs tasks itself (ORCHESTRATOR_WORKER=on), one process fewer on a task's path (docs/decisions.md \"The worker in the orchestrator's process\").",
  ),
  START_READY_TIMEOUT_MS: envInt(60_000, 1_000).describe(
    "`npm start`: how long each service may take to become ready.",
  ),
};
