import { existsSync } from "node:fs";
import path from "node:path";
import { freePort } from "./free-port.ts";
import { REPO_ROOT } from "./paths.ts";
import { findNginx, startNginxRouter } from "./nginx-router.ts";
import { startRouter, type RouteRule, type Router } from "./router.ts";
import { startService, type Env, type RunningService, type StartServiceOptions } from "./service-process.ts";
import { SERVICES, type ServiceDefinition, type StackContext } from "./services.ts";

export interface StackOptions {
  /** Shared by every service: DATABASE_URL, REDIS_URL, REDIS_KEY_PREFIX, NATS_URL, NATS_PREFIX, NODE_ENV, … */
  env: Env;
  /** Extra variables for one service (by name), applied after the base env. */
  serviceEnv?: Record<string, Env>;
  /** "default": each service on its default port (npm start); "free": OS-chosen free ports (tests). */
  ports?: "default" | "free";
  /** Public router port; 0 picks a free one. */
  publicPort: number;
  publicHost?: string;
  /** Instances per service (default 1); the router round-robins over them. */
  replicas?: Record<string, number>;
  /** Run only these services (default: every service whose entry exists). */
  only?: string[];
  logs?: "capture" | "echo" | "inherit";
  /** See StartServiceOptions.echoFormat. */
  echoFormat?: StartServiceOptions["echoFormat"];
  readyTimeoutMs?: number;
  definitions?: readonly ServiceDefinition[];
  root?: string;
  onRouterError?: Parameters<typeof startRouter>[0]["onError"];
  /**
   * The public router: "node" (libs/devstack's own, the default), "nginx" (fails without nginx), or
   * "auto" (nginx when installed, else node). docs/decisions.md "nginx on the public port".
   */
  router?: RouterKind;
  /** nginx's own warnings and errors (upstream failures among them), line by line. */
  onRouterLog?: (line: string) => void;
}

export type RouterKind = "node" | "nginx" | "auto";

/** The router a stack would start for `kind` on this machine. */
export function resolveRouterKind(kind: RouterKind = "node"): "node" | "nginx" {
  if (kind === "auto") return findNginx() ? "nginx" : "node";
  return kind;
}

export interface Stack {
  readonly router: Router;
  /** Which router serves the public port. */
  readonly routerKind: "node" | "nginx";
  /** Public base URL of the gateway API: `<router>/api/v1`. */
  readonly baseUrl: string;
  /** `<model-catalog>/providers/models`, when the model catalog runs. */
  readonly catalogUrl: string | undefined;
  /** Every running instance, in start order. */
  readonly services: RunningService[];
  /** Instance `index` of a service. */
  service(name: string, index?: number): RunningService | undefined;
  /** Services whose entry file is missing and were skipped. */
  readonly skipped: string[];
  /** Starts one more instance of a service (not behind the router), e.g. with other settings. Stopped by `stop()`. */
  startInstance(name: string, options?: { env?: Env; port?: number }): Promise<RunningService>;
  /** Router first, then every service; idempotent. */
  stop(graceMs?: number): Promise<void>;
}

/** The service definitions whose entry file exists under `root`. */
export function existingServices(root = REPO_ROOT, definitions = SERVICES): ServiceDefinition[] {
  return definitions.filter((d) => existsSync(path.join(root, d.entry)));
}

/** Routing table of the public router: longer prefixes first, like an Ingress. */
export function routesFor(instances: { definition: ServiceDefinition; service: RunningService }[]): RouteRule[] {
  const byPrefix = new Map<string, RouteRule>();
  for (const { definition, service } of instances) {
    for (const r of definition.routes ?? []) {
      const rule = byPrefix.get(r.prefix) ?? { prefix: r.prefix, targets: [], proxyTimeoutMs: r.proxyTimeoutMs };
      rule.targets.push(service.url);
      byPrefix.set(r.prefix, rule);
    }
  }
  return [...byPrefix.values()].sort((a, b) => b.prefix.length - a.prefix.length);
}

export async function startStack(options: StackOptions): Promise<Stack> {
  const root = options.root ?? REPO_ROOT;
  const all = options.definitions ?? SERVICES;
  const present = existingServices(root, all).filter((d) => !options.only || options.only.includes(d.name));
  const skipped = all.filter((d) => !present.includes(d)).map((d) => d.name);

  // Ports are fixed before anything starts, so each service's env can name the others.
  const planned: { definition: ServiceDefinition; name: string; port: number | undefined }[] = [];
  for (const definition of present) {
    const count = options.replicas?.[definition.name] ?? 1;
    for (let i = 0; i < count; i++) {
      let port = definition.defaultPort;
      if (port !== undefined && (options.ports === "free" || i > 0)) port = await freePort();
      planned.push({ definition, name: i === 0 ? definition.name : `${definition.name}#${i + 1}`, port });
    }
  }
  const ctx: StackContext = {
    portOf: (name) => planned.find((p) => p.definition.name === name)?.port,
    urlOf: (name) => {
      const port = ctx.portOf(name);
      return port === undefined ? undefined : `http://127.0.0.1:${port}`;
    },
  };
  // Ops ports are chosen by each process (METRICS_PORT=0) and read from its log, so many
  // processes share one machine without racing for pre-picked ports.
  const envFor = (definition: ServiceDefinition, port: number | undefined, extra?: Env): Env => ({
    ...options.env,
    ...definition.env?.(ctx),
    ...options.serviceEnv?.[definition.name],
    ...extra,
    ...(port !== undefined ? { PORT: String(port) } : {}),
    METRICS_PORT: "0",
    // Internal ports (services, gRPC, ops) listen on loopback only: only the router is public
    // (docs/security.md, "Who can reach which port").
    HOST: "127.0.0.1",
    METRICS_HOST: "127.0.0.1",
  });

  // `named`: what the service's own env said of the others when it started (ports of services it calls).
  const started: {
    definition: ServiceDefinition;
    service: RunningService;
    plan: (typeof planned)[number];
    named: string;
  }[] = [];
  const extras: RunningService[] = [];
  const stopAll = async (graceMs?: number) => {
    await Promise.all([...started.map((s) => s.service), ...extras].map((s) => s.stop(graceMs)));
  };
  const namedOthers = (definition: ServiceDefinition) => JSON.stringify(definition.env?.(ctx) ?? {});

  const startPlanned = async (p: (typeof planned)[number]) => {
    const start = () =>
      startService({
        name: p.name,
        entry: path.join(root, p.definition.entry),
        cwd: root,
        env: envFor(p.definition, p.port),
        port: p.port,
        readyPath: p.definition.readyPath,
        readyTimeoutMs: options.readyTimeoutMs,
        logs: options.logs,
        echoFormat: options.echoFormat,
      });
    // A free port picked here can be taken by another process before the service binds it
    // (parallel test files): pick another and try again.
    for (let attempt = 1; ; attempt++) {
      const named = namedOthers(p.definition);
      try {
        return { service: await start(), named };
      } catch (err) {
        const picked = p.port !== undefined && p.port !== p.definition.defaultPort;
        if (!picked || attempt >= 3 || !String((err as Error).message).includes("EADDRINUSE")) throw err;
        p.port = await freePort();
      }
    }
  };

  const results = await Promise.allSettled(
    planned.map(async (p) => {
      const { service, named } = await startPlanned(p);
      started.push({ definition: p.definition, service, plan: p, named });
      return service;
    }),
  );
  // A service that had to take another port (above) started while the others were already told
  // its first one: restart each whose environment named the old port (a gateway pointed at a port
  // another process had taken answered every call "Protocol error").
  if (results.every((r) => r.status === "fulfilled")) {
    for (const s of started) {
      if (namedOthers(s.definition) === s.named) continue;
      await s.service.stop();
      const again = await startPlanned(s.plan);
      s.service = again.service;
      s.named = again.named;
    }
  }
  const failures = results.flatMap((r) => (r.status === "rejected" ? [r.reason as Error] : []));
  if (failures.length > 0) {
    await stopAll(2_000);
    throw new AggregateError(failures, failures.map((f) => f.message).join("\n\n"));
  }
  // Keep the start order stable for callers, whatever order they became ready in.
  started.sort(
    (a, b) => planned.findIndex((p) => p.name === a.service.name) - planned.findIndex((p) => p.name === b.service.name),
  );

  let router: Router;
  const routerKind = resolveRouterKind(options.router);
  try {
    const routerOptions = {
      port: options.publicPort,
      host: options.publicHost,
      routes: routesFor(started),
      onError: options.onRouterError,
      ...(options.env.MAX_BODY_BYTES ? { maxBodyBytes: Number(options.env.MAX_BODY_BYTES) } : {}),
    };
    router =
      routerKind === "nginx"
        ? await startNginxRouter({ ...routerOptions, onLog: options.onRouterLog })
        : await startRouter(routerOptions);
  } catch (err) {
    await stopAll(2_000);
    throw err;
  }

  const catalog = started.find((s) => s.definition.name === "model-catalog")?.service;
  let stopping: Promise<void> | undefined;
  return {
    router,
    routerKind,
    baseUrl: `${router.url}/api/v1`,
    catalogUrl: catalog ? `${catalog.url}/providers/models` : undefined,
    services: started.map((s) => s.service),
    skipped,
    service: (name, index = 0) => started.filter((s) => s.definition.name === name)[index]?.service,
    async startInstance(name, extra = {}) {
      const definition = all.find((d) => d.name === name);
      if (!definition) throw new Error(`unknown service ${name}`);
      const port = definition.defaultPort === undefined ? undefined : (extra.port ?? (await freePort()));
      const service = await startService({
        name: `${name}*${extras.length + 1}`,
        entry: path.join(root, definition.entry),
        cwd: root,
        env: envFor(definition, port, extra.env),
        port,
        readyPath: definition.readyPath,
        readyTimeoutMs: options.readyTimeoutMs,
        logs: options.logs,
        echoFormat: options.echoFormat,
      });
      extras.push(service);
      return service;
    },
    stop(graceMs) {
      stopping ??= (async () => {
        await router.close();
        await stopAll(graceMs);
      })();
      return stopping;
    },
  };
}
