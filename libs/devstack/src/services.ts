import type { Env } from "./service-process.ts";

// The services of the system, as `npm start` and the e2e harness run them. A service whose
// entry file does not exist yet is skipped, so adding a service is adding a row here.

export interface StackContext {
  /** Base URL (`http://127.0.0.1:<port>`) of the first instance of a service in this stack, if it runs. */
  urlOf(name: string): string | undefined;
  portOf(name: string): number | undefined;
}

export interface ServiceDefinition {
  name: string;
  /** Entry file, relative to the repository root. */
  entry: string;
  /** Port used by `npm start`; without one the service is a background worker (no readiness probe). */
  defaultPort?: number;
  /** HTTP path answering 200 once the service is up; with a port but no path, readiness is a TCP connect. */
  readyPath?: string;
  /** Path prefixes the public router sends to this service. */
  routes?: { prefix: string; proxyTimeoutMs?: number }[];
  /** Variables this service needs beyond the shared base environment and PORT. */
  env?: (ctx: StackContext) => Env;
}

export const SERVICES: readonly ServiceDefinition[] = [
  {
    name: "gateway",
    entry: "services/gateway/src/main.ts",
    defaultPort: 8081,
    // liveness, not readiness: /readiness also checks the orchestrator, which may start later
    readyPath: "/api/v1/health",
    // the probes are also served at the server root (docs/decisions.md "Probes at the root")
    routes: [
      { prefix: "/api/v1", proxyTimeoutMs: 60_000 },
      { prefix: "/health", proxyTimeoutMs: 60_000 },
      { prefix: "/readiness", proxyTimeoutMs: 60_000 },
    ],
    env: (ctx) => {
      const port = ctx.portOf("orchestrator");
      return port === undefined ? {} : { ORCHESTRATOR_ADDRESS: `127.0.0.1:${port}` };
    },
  },
  {
    name: "model-catalog",
    entry: "services/model-catalog/src/main.ts",
    defaultPort: 8090,
    readyPath: "/health",
  },
  {
    name: "stream",
    entry: "services/stream/src/main.ts",
    defaultPort: 8082,
    readyPath: "/health",
    // long-lived SSE/WebSocket: no upstream timeout
    routes: [{ prefix: "/api/v1/stream" }],
  },
  {
    name: "session",
    entry: "services/session/src/main.ts",
    defaultPort: 8083,
    readyPath: "/health",
    routes: [{ prefix: "/api/v1/sessions", proxyTimeoutMs: 60_000 }],
  },
  {
    name: "console",
    entry: "services/console/src/main.ts",
    defaultPort: 8084,
    readyPath: "/health",
    // the web console's page (static files; the page itself calls /api/v1)
    routes: [{ prefix: "/console", proxyTimeoutMs: 60_000 }],
  },
  {
    name: "orchestrator",
    entry: "services/orchestrator/src/main.ts",
    // gRPC: readiness is a TCP connect
    defaultPort: 50051,
  },
  {
    name: "worker",
    entry: "services/orchestrator/src/worker.ts",
  },
];

/**
 * Where a stack runs tasks: `processes` worker processes, or with 0 the orchestrator itself
 * (ORCHESTRATOR_WORKER=on, no worker process: one process fewer on a task's path). `npm start`
 * and the task bench use it; docs/decisions.md "The worker in the orchestrator's process".
 */
export function workerLayout(processes: number): {
  serviceEnv: Record<string, Env>;
  replicas: Record<string, number>;
} {
  if (processes > 0)
    return { serviceEnv: { orchestrator: { ORCHESTRATOR_WORKER: "off" } }, replicas: { worker: processes } };
  return { serviceEnv: { orchestrator: { ORCHESTRATOR_WORKER: "on" } }, replicas: { worker: 0 } };
}
