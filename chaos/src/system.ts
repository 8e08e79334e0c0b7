// One copy of the system for one scenario: its own PostgreSQL, Redis and NATS (own-servers.ts:
// free ports, a temp dir, killable) and every service as a process, through the e2e harness.
import type { Env, RouterKind, RunningService } from "@tog/devstack";
import {
  ownServersDir,
  startE2eEnvironment,
  startOwnNats,
  startOwnPostgres,
  startOwnRedis,
  type E2eEnvironment,
  type OwnNats,
  type OwnServer,
} from "@tog/tests-e2e";

export interface SystemOptions {
  replicas?: Record<string, number>;
  env?: Env;
  services?: Record<string, Env>;
  /** NATS servers in one cluster (streams replicated to all of them when > 1). */
  natsServers?: number;
  /** The public router (default: libs/devstack's Node router, inside this process). */
  router?: RouterKind;
  /** More settings of the system's PostgreSQL (`-c name=value`). */
  postgresSettings?: Record<string, string>;
}

export interface ChaosSystem {
  env: E2eEnvironment;
  postgres: OwnServer;
  redis: OwnServer;
  nats: OwnNats;
  apiKey: string;
  /** The user the API key belongs to (part of each submission's idempotency identity). */
  userId: string;
  /** The database of the system (for the verification queries). */
  databaseUrl: string;
  /** Every worker process started so far, live or not (the scenario kills and adds them). */
  workers: RunningService[];
  addWorker(): Promise<RunningService>;
  /** Another instance of a service (recorded, so its logs are read for the report). */
  startInstance(name: string, options?: { env?: Env; port?: number }): Promise<RunningService>;
  /** Tasks the scenario itself submitted (calibration), not the clients: left out of the verdict's duplicates. */
  readonly ownTaskIds: string[];
  /** Every process started after the stack (workers included). */
  readonly instances: RunningService[];
  close(): Promise<void>;
}

const WORKER_ENV: Env = { OFFLINE_CHUNK_DELAY_MS: "10", WORKER_CONCURRENCY: "32" };

export async function startSystem(options: SystemOptions = {}): Promise<ChaosSystem> {
  const dir = ownServersDir("tog-chaos");
  const [postgres, redis, nats] = await Promise.all([
    startOwnPostgres(dir.dir, options.postgresSettings ? { settings: options.postgresSettings } : {}),
    startOwnRedis(dir.dir),
    startOwnNats(dir.dir, { cluster: options.natsServers ?? 1 }),
  ]);
  let env: E2eEnvironment | undefined;
  try {
    const replicas =
      options.natsServers && options.natsServers > 1 ? { NATS_STREAM_REPLICAS: String(options.natsServers) } : {};
    env = await startE2eEnvironment({
      servers: { databaseAdminUrl: postgres.url, redisUrl: redis.url, natsUrl: nats.url },
      env: {
        GATEWAY_SKIP_AUTH: "0",
        RATE_LIMIT_RPM: "1000000",
        RATE_LIMIT_BURST: "100000",
        LOG_LEVEL: "warn",
        ...replicas,
        ...options.env,
      },
      services: { ...options.services, worker: { ...WORKER_ENV, ...options.services?.worker } },
      replicas: { worker: 2, ...options.replicas },
      only: ["gateway", "orchestrator", "worker", "stream"],
      ...(options.router ? { router: options.router } : {}),
    });
    const running = env;
    const created = await running.createApiKey({ user: "chaos@example.com", createUser: true, name: "chaos" });
    const workers: RunningService[] = [];
    const instances: RunningService[] = [];
    for (let i = 0; ; i++) {
      try {
        workers.push(running.service("worker", i));
      } catch {
        break;
      }
    }
    return {
      env: running,
      postgres,
      redis,
      nats,
      apiKey: created.key,
      userId: created.user_id,
      databaseUrl: running.database.url,
      workers,
      instances,
      ownTaskIds: [],
      async startInstance(name, opts = {}) {
        const service = await running.stack.startInstance(name, opts);
        instances.push(service);
        return service;
      },
      async addWorker() {
        const worker = await running.stack.startInstance("worker", {
          env: { ...WORKER_ENV, ...options.services?.worker },
        });
        workers.push(worker);
        instances.push(worker);
        return worker;
      },
      async close() {
        await running.close().catch(() => undefined);
        await Promise.allSettled([postgres.stop(), redis.stop(), nats.stopAll()]);
        dir.remove();
      },
    };
  } catch (err) {
    await env?.close().catch(() => undefined);
    await Promise.allSettled([postgres.stop(), redis.stop(), nats.stopAll()]);
    dir.remove();
    throw err;
  }
}
