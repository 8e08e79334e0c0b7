import { readFileSync } from "node:fs";
import path from "node:path";
import { beforeAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { baseConfigShape, loadConfig, type ConfigShape, type Env } from "@tog/core";
import { dbConfigShape } from "@tog/db";
import { busConfigShape } from "@tog/bus";
import { SERVICES } from "@tog/devstack";
import { gatewayConfigShape } from "@tog/gateway";
import { streamConfigShape } from "@tog/stream";
import { sessionConfigShape } from "@tog/session";
import { orchestratorConfigShape, workerConfigShape } from "@tog/orchestrator";
import { modelCatalogConfigShape } from "@tog/model-catalog";
import { consoleConfigShape } from "@tog/console";
import { assertAuthConfig } from "@tog/edge";
import { dockerfileTargets } from "./dockerfile.ts";
import { nginxUpstreams, NGINX_CONF } from "./nginx.ts";
import { findDockerCompose, gate, REPO_ROOT, run } from "./tools.ts";

// docker-compose.yml cannot be started here (no Docker engine): docker-compose validates it,
// and the checks below hold it to what the issue asks.

const COMPOSE_FILE = path.join(REPO_ROOT, "docker-compose.yml");

interface ComposeService {
  image?: string;
  build?: { context: string; target?: string };
  command?: string[];
  environment?: Record<string, string | number | boolean>;
  depends_on?: Record<string, { condition: string }> | string[];
  ports?: string[];
  volumes?: string[];
  restart?: string;
  stop_grace_period?: string;
  container_name?: string;
  healthcheck?: unknown;
}
interface ComposeFile {
  services: Record<string, ComposeService>;
  volumes?: Record<string, unknown>;
}

const SHAPES: Record<string, ConfigShape> = {
  gateway: gatewayConfigShape,
  stream: streamConfigShape,
  session: sessionConfigShape,
  orchestrator: orchestratorConfigShape,
  worker: workerConfigShape,
  "model-catalog": modelCatalogConfigShape,
  console: consoleConfigShape,
  migrate: { ...baseConfigShape, ...dbConfigShape, ...busConfigShape },
};
const INFRA = ["postgres", "redis", "nats"];

/** `${NAME:-default}` and `${NAME}` as compose interpolates them, in an environment with only `given` set. */
const interpolate = (value: string, given: Env = {}) =>
  value.replace(/\$\{(\w+)(?::?-([^}]*))?\}/g, (_, name: string, fallback?: string) => given[name] || (fallback ?? ""));
const compose = parse(readFileSync(COMPOSE_FILE, "utf8"), { merge: true }) as ComposeFile;
const envOf = (s: ComposeService, given: Env = {}): Env =>
  Object.fromEntries(Object.entries(s.environment ?? {}).map(([k, v]) => [k, interpolate(String(v), given)]));
const dependsOn = (s: ComposeService): Record<string, string> =>
  Array.isArray(s.depends_on)
    ? Object.fromEntries(s.depends_on.map((d) => [d, "service_started"]))
    : Object.fromEntries(Object.entries(s.depends_on ?? {}).map(([k, v]) => [k, v.condition]));
const seconds = (d: string | undefined) => {
  const m = /^(\d+)(s|m)$/.exec(d ?? "10s");
  if (!m) throw new Error(`unsupported duration ${d}`);
  return Number(m[1]) * (m[2] === "m" ? 60 : 1);
};

const dockerCompose = findDockerCompose();
const tool = gate("docker-compose", dockerCompose);

describe("docker-compose.yml", () => {
  describe.skipIf(tool.skip)("docker-compose config", () => {
    beforeAll(() => tool.require());
    it("is a valid compose file (docker-compose config -q)", () => {
      const r = run(dockerCompose!, ["-f", COMPOSE_FILE, "config", "-q"], {
        env: { PATH: "/usr/local/bin:/usr/bin:/bin", HOME: "/tmp" },
      });
      expect(r.stderr).toBe("");
      expect(r.status).toBe(0);
    });
  });

  it("runs PostgreSQL, Redis, NATS, the one-shot migrate, every service and the edge", () => {
    expect(Object.keys(compose.services).sort()).toEqual(
      [...INFRA, "migrate", "edge", "jaeger", ...SERVICES.map((s) => s.name)].sort(),
    );
    for (const name of INFRA) expect(compose.services[name]!.healthcheck, `${name}: health check`).toBeDefined();
  });

  it("persists JetStream and PostgreSQL in named volumes", () => {
    const nats = compose.services.nats!;
    const command = nats.command ?? [];
    expect(command).toContain("-js");
    const storeDir = command[command.indexOf("-sd") + 1];
    expect(storeDir, "JetStream store directory").toBeDefined();
    const mount = (nats.volumes ?? []).map((v) => v.split(":")).find(([, target]) => target === storeDir);
    expect(mount, "the JetStream store is on a volume").toBeDefined();
    expect(Object.keys(compose.volumes ?? {})).toContain(mount![0]);
    const pg = (compose.services.postgres!.volumes ?? [])
      .map((v) => v.split(":"))
      .find(([, t]) => t === "/var/lib/postgresql/data");
    expect(Object.keys(compose.volumes ?? {})).toContain(pg?.[0]);
  });

  it("migrates the database and creates the JetStream streams once, before the services start", () => {
    const migrate = compose.services.migrate!;
    expect(migrate.build?.target).toBe("migrate");
    expect(migrate.restart).toBe("no");
    expect(dependsOn(migrate)).toEqual({ postgres: "service_healthy", nats: "service_healthy" });
    for (const s of SERVICES) {
      if ("DATABASE_URL" in SHAPES[s.name]!)
        expect(dependsOn(compose.services[s.name]!).migrate, `${s.name} waits for migrate`).toBe(
          "service_completed_successfully",
        );
    }
  });

  it("builds every service from its Dockerfile target, scalable (no fixed names, no public ports)", () => {
    const targets = dockerfileTargets();
    for (const s of SERVICES) {
      const svc = compose.services[s.name]!;
      expect(svc.build, s.name).toEqual({ context: ".", target: s.name });
      expect(targets.has(s.name), `${s.name}: Dockerfile target`).toBe(true);
      expect(svc.image, s.name).toBe(`tog/${s.name}:local`);
      expect(svc.container_name, s.name).toBeUndefined();
      for (const p of svc.ports ?? []) expect(p, `${s.name}: published on loopback only`).toMatch(/^127\.0\.0\.1:/);
    }
    for (const [name, svc] of Object.entries(compose.services)) {
      if (name !== "edge")
        for (const p of svc.ports ?? []) expect(p, `${name}: only the edge is public`).toMatch(/^127\.0\.0\.1:/);
    }
  });

  it("gives each service an environment its config schema accepts", () => {
    for (const [name, shape] of Object.entries(SHAPES)) {
      const env = envOf(compose.services[name]!);
      const config = loadConfig(shape, env) as Record<string, unknown>;
      const service = SERVICES.find((s) => s.name === name);
      if (service?.defaultPort !== undefined) expect(config.PORT, `${name}: PORT`).toBe(service.defaultPort);
      expect(config.NODE_ENV, name).toBe("production");
    }
    expect(envOf(compose.services.gateway!).ORCHESTRATOR_ADDRESS).toBe("dns:///orchestrator:50051");
  });

  it("ships no token secret: with authentication on and no AUTH_TOKEN_SECRET given, the services refuse to start", () => {
    const operator = { GATEWAY_SKIP_AUTH: "0" };
    for (const [name, svc] of Object.entries(compose.services)) {
      const env = envOf(svc, operator);
      expect(env.AUTH_TOKEN_SECRET ?? "", `${name}: AUTH_TOKEN_SECRET`).toBe("");
      expect(env.AUTH_TOKEN_SECRET_PREVIOUS ?? "", `${name}: AUTH_TOKEN_SECRET_PREVIOUS`).toBe("");
    }
    for (const name of ["gateway", "stream", "session"]) {
      const config = loadConfig(SHAPES[name]!, envOf(compose.services[name]!, operator)) as Parameters<
        typeof assertAuthConfig
      >[0];
      expect(config.GATEWAY_SKIP_AUTH, name).toBe(false);
      expect(() => assertAuthConfig(config), name).toThrow(/AUTH_TOKEN_SECRET must be set/);
      // The operator's own secret (and a previous one, for rotation) reaches the service.
      const secret = "s".repeat(40);
      const own = envOf(compose.services[name]!, {
        ...operator,
        AUTH_TOKEN_SECRET: secret,
        AUTH_TOKEN_SECRET_PREVIOUS: "p".repeat(40),
      });
      expect([own.AUTH_TOKEN_SECRET, own.AUTH_TOKEN_SECRET_PREVIOUS], name).toEqual([secret, "p".repeat(40)]);
    }
  });

  it("gives every service a stop grace period longer than its graceful shutdown", () => {
    for (const s of SERVICES) {
      const svc = compose.services[s.name]!;
      const shutdownMs = Number(envOf(svc).SHUTDOWN_TIMEOUT_MS ?? 25_000);
      expect(seconds(svc.stop_grace_period) * 1000, s.name).toBeGreaterThan(shutdownMs);
    }
  });

  it("puts the nginx edge with deploy/nginx/nginx.conf on the public port, routing to the services' ports", () => {
    const edge = compose.services.edge!;
    expect(edge.image).toMatch(/^nginx:/);
    expect(edge.volumes).toContain("./deploy/nginx/nginx.conf:/etc/nginx/nginx.conf:ro");
    expect((edge.ports ?? []).map((p) => interpolate(p))).toEqual(["8080:8080"]);
    const upstreams = nginxUpstreams(readFileSync(NGINX_CONF, "utf8"));
    expect(upstreams.length).toBeGreaterThan(0);
    for (const { host, port } of upstreams) {
      const svc = compose.services[host];
      expect(svc, `nginx upstream ${host} is a compose service`).toBeDefined();
      expect(Number(envOf(svc!).PORT), `${host}: port`).toBe(port);
      expect(Object.keys(dependsOn(edge))).toContain(host);
    }
  });
});
