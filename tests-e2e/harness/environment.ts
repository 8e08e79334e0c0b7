import { randomBytes } from "node:crypto";
import path from "node:path";
import {
  REPO_ROOT,
  runBusSetup,
  runNodeScript,
  SERVICES,
  startRouter,
  startStack,
  type RouterKind,
  routesFor,
  type Env,
  type LogRecord,
  type Router,
  type RunningService,
  type ServiceDefinition,
  type Stack,
} from "@tog/devstack";
import type { TestDatabase } from "@tog/testkit";
import { migrate } from "@tog/db";
import pg from "pg";
import { deleteNatsStreams, deleteRedisKeys } from "./cleanup.ts";
import { e2eConfig } from "./config.ts";
import { acquireInfrastructure, type Infrastructure } from "./infrastructure.ts";
import { runningStacks } from "./running-stacks.ts";

async function createOwnDatabase(adminUrl: string): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: adminUrl });
  await admin.connect();
  try {
    await admin.query("CREATE DATABASE tog");
  } finally {
    await admin.end();
  }
  const url = new URL(adminUrl);
  url.pathname = "/tog";
  await migrate({ databaseUrl: url.toString() });
  return { name: "tog", url: url.toString(), drop: async () => undefined };
}

export const KEYS_CLI = path.join(REPO_ROOT, "services/gateway/src/cli/keys.ts");

export interface E2eOptions {
  /** Variables for every service, on top of the harness defaults (e.g. `{ GATEWAY_SKIP_AUTH: "0" }`). */
  env?: Env;
  /** Variables for one service by name (e.g. `{ gateway: { RATE_LIMIT_RPM: "5" } }`). */
  services?: Record<string, Env>;
  /** Instances per service behind the router (scale-out tests). */
  replicas?: Record<string, number>;
  /** Only these services (default: all that exist). */
  only?: string[];
  /** Replaces the service table (e.g. to add a test double of a service); default: devstack's SERVICES. */
  definitions?: readonly ServiceDefinition[];
  /**
   * Servers the test owns (own-servers.ts) instead of the machine's shared ones, so it may kill
   * and restart them. `databaseAdminUrl` is a cluster of its own: a database is created and
   * migrated there and left with the cluster.
   */
  servers?: { databaseAdminUrl: string; redisUrl: string; natsUrl: string };
  /** The public router (default "node": the tests' routerErrors come from it); see StackOptions.router. */
  router?: RouterKind;
  /**
   * The test stops, kills or overloads services on purpose, so the router may answer 502/503
   * itself. Otherwise `close()` fails when it did: a service's answer the router could not forward
   * (a malformed response, a reset before the status line) is a bug even when the test went on.
   */
  allowRouterErrors?: boolean;
}

export interface CreatedApiKey {
  key: string;
  id: string;
  prefix: string;
  user_id: string;
  expires_at: string | null;
}

export interface CreateApiKeyOptions {
  /** id, email or name; default: the default user. */
  user?: string;
  name?: string;
  /** e.g. "1s", "30d" (the CLI's --expires-in). */
  expiresIn?: string;
  /** Create the user when it does not exist. */
  createUser?: boolean;
}

export interface Variant {
  service: RunningService;
  router: Router;
  /** `<its own router>/api/v1`. */
  baseUrl: string;
}

export interface E2eEnvironment {
  /** Public API through the router: `http://127.0.0.1:<port>/api/v1`. */
  readonly baseUrl: string;
  /** `GET` here lists the model catalog (`…/providers/models`); undefined when that service does not exist yet. */
  readonly catalogUrl: string | undefined;
  readonly stack: Stack;
  readonly infra: Infrastructure;
  readonly database: TestDatabase;
  readonly redisKeyPrefix: string;
  readonly natsPrefix: string;
  /** The environment every service got (before per-service overrides). */
  readonly env: Env;
  /** Failures of the router's upstream requests (each answered 503/502 by the router), by error code and message. */
  readonly routerErrors: ReadonlyMap<string, number>;
  /** Whether a service runs in this environment. */
  has(name: string): boolean;
  service(name: string, index?: number): RunningService;
  /** Captured JSON log lines of a service. */
  logs(name: string, index?: number): LogRecord[];
  /** Runs the keys CLI (`create … --json`) against this environment's database. */
  createApiKey(options?: CreateApiKeyOptions): Promise<CreatedApiKey>;
  revokeApiKey(idOrPrefix: string): Promise<void>;
  /** An access token (`keys token`) for an existing user, as `POST /auth/token` would issue it. */
  accessToken(user: string): Promise<string>;
  /** Runs the keys CLI with any arguments; resolves with its stdout. */
  keysCli(args: string[]): Promise<string>;
  /** One more instance of a service with other settings, behind a router of its own. */
  startVariant(name: string, env: Env): Promise<Variant>;
  /** Stops every process, drops the database, deletes the streams and Redis keys. */
  close(): Promise<void>;
}

/**
 * An isolated copy of the system for one test file: its own database, Redis key prefix and
 * NATS prefix, each service as its own OS process on a free port, and the router in front.
 */
export async function startE2eEnvironment(options: E2eOptions = {}): Promise<E2eEnvironment> {
  const acquired = options.servers ? undefined : await acquireInfrastructure();
  const testkit = acquired?.testkit ?? (await import("@tog/testkit"));
  const infra: Infrastructure = acquired?.infra ?? { ...options.servers!, kind: "local", stop: async () => undefined };
  const id = testkit.uniqueId("e2e");
  const routerErrors = new Map<string, number>();
  const natsPrefix = id;
  const redisKeyPrefix = `${id}:`;
  const cleanups: { name: string; run: () => Promise<unknown> }[] = [
    { name: "infrastructure", run: () => infra.stop() },
  ];
  const variants: Variant[] = [];
  let stack: Stack | undefined;
  let database: TestDatabase | undefined;

  const close = async () => {
    if (stack) runningStacks.delete(stack);
    const errors: unknown[] = [];
    const attempt = async (name: string, fn: () => Promise<unknown>) => {
      try {
        await fn();
      } catch (err) {
        errors.push(new Error(`e2e teardown: ${name} failed: ${(err as Error).message}`, { cause: err }));
      }
    };
    await Promise.all(variants.map((v) => attempt("variant router", () => v.router.close(200))));
    if (stack) await attempt("services", () => stack!.stop(5_000));
    // Cleanups were pushed in set-up order; undo in reverse.
    for (const c of [...cleanups].reverse()) await attempt(c.name, c.run);
    if (!options.allowRouterErrors && routerErrors.size > 0)
      errors.push(new Error(`e2e: the router could not forward answers: ${JSON.stringify([...routerErrors])}`));
    if (errors.length > 0) throw new AggregateError(errors, errors.map((e) => (e as Error).message).join("\n"));
  };

  try {
    database = options.servers
      ? await createOwnDatabase(options.servers.databaseAdminUrl)
      : await testkit.createTestDatabase();
    const db = database;
    cleanups.push({ name: "drop database", run: () => db.drop() });
    cleanups.push({ name: "delete redis keys", run: () => deleteRedisKeys(infra.redisUrl, redisKeyPrefix) });
    cleanups.push({ name: "delete nats streams", run: () => deleteNatsStreams(infra.natsUrl, natsPrefix) });

    const env: Env = {
      NODE_ENV: "development",
      LOG_LEVEL: "info",
      DATABASE_URL: database.url,
      DATABASE_POOL_MAX: "4",
      REDIS_URL: infra.redisUrl,
      REDIS_KEY_PREFIX: redisKeyPrefix,
      NATS_URL: infra.natsUrl,
      NATS_PREFIX: natsPrefix,
      SHUTDOWN_TIMEOUT_MS: "5000",
      // Each environment has its own token secret, as each installation of `npm start` does.
      AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"),
      ...options.env,
    };
    await runBusSetup({ ...env, LOG_LEVEL: "warn" });

    stack = await startStack({
      onRouterError: (err) => {
        const key = `${(err as NodeJS.ErrnoException).code ?? err.name}: ${err.message}`;
        routerErrors.set(key, (routerErrors.get(key) ?? 0) + 1);
      },
      env,
      serviceEnv: options.services,
      replicas: options.replicas,
      only: options.only,
      definitions: options.definitions,
      ports: "free",
      publicPort: 0,
      publicHost: "127.0.0.1",
      logs: e2eConfig.E2E_LOGS,
      readyTimeoutMs: e2eConfig.E2E_READY_TIMEOUT_MS,
      router: options.router,
    });
    const running = stack;

    const service = (name: string, index = 0) => {
      const s = running.service(name, index);
      if (!s) throw new Error(`service ${name}${index ? ` #${index + 1}` : ""} does not run in this environment`);
      return s;
    };
    const keysCli = async (args: string[]) => {
      const result = await runNodeScript({
        entry: KEYS_CLI,
        args,
        cwd: REPO_ROOT,
        env: { ...env, ...options.services?.gateway, LOG_LEVEL: "warn" },
      });
      return result.stdout;
    };

    runningStacks.add(running);
    return {
      routerErrors,
      baseUrl: running.baseUrl,
      catalogUrl: running.catalogUrl,
      stack: running,
      infra,
      database: db,
      redisKeyPrefix,
      natsPrefix,
      env,
      has: (name) => running.service(name) !== undefined,
      service,
      logs: (name, index) => service(name, index).logs(),
      keysCli,
      async createApiKey(o = {}) {
        const args = ["create", "--user", o.user ?? "default", "--json"];
        if (o.name) args.push("--name", o.name);
        if (o.expiresIn) args.push("--expires-in", o.expiresIn);
        if (o.createUser) args.push("--create-user");
        const out = await keysCli(args);
        const line = out.trim().split("\n").at(-1) ?? "";
        const created = JSON.parse(line) as CreatedApiKey;
        if (!created.key?.startsWith("sk_")) throw new Error(`keys CLI printed no key: ${out}`);
        return created;
      },
      async revokeApiKey(idOrPrefix) {
        await keysCli(["revoke", idOrPrefix]);
      },
      async accessToken(user) {
        const out = await keysCli(["token", "--user", user, "--json"]);
        const { token } = JSON.parse(out.trim().split("\n").at(-1) ?? "{}") as { token?: string };
        if (!token) throw new Error(`keys CLI printed no token: ${out}`);
        return token;
      },
      async startVariant(name, variantEnv) {
        const definition = (options.definitions ?? SERVICES).find((d) => d.name === name);
        if (!definition) throw new Error(`unknown service ${name}`);
        const instance = await running.startInstance(name, { env: variantEnv });
        const router = await startRouter({
          port: 0,
          host: "127.0.0.1",
          routes: routesFor([{ definition, service: instance }]),
        });
        const variant = { service: instance, router, baseUrl: `${router.url}/api/v1` };
        variants.push(variant);
        return variant;
      },
      close,
    };
  } catch (err) {
    await close().catch(() => undefined);
    throw err;
  }
}
