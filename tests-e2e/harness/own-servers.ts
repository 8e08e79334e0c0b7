// PostgreSQL, Redis and NATS servers a test starts for itself (the distribution's binaries, free
// ports, a temp dir), so it may kill, pause and restart them: the machine's shared services are
// never touched. Used by the fault tests (tests-e2e/chaos) and `npm run chaos`.
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { chownSync, chmodSync, existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { canConnect, freePort } from "@tog/devstack";

export interface OwnServer {
  readonly name: string;
  readonly port: number;
  readonly url: string;
  readonly running: boolean;
  /** (Re)starts on the same port and data directory; resolves when it accepts work. */
  start(): Promise<void>;
  /** SIGTERM (clean; PostgreSQL: SIGINT, its fast shutdown) or SIGKILL (crash); resolves when the process is gone. */
  stop(signal?: StopSignal): Promise<void>;
  /** SIGSTOP / SIGCONT: the process keeps its sockets but answers nothing. */
  pause(): void;
  resume(): void;
  restart(signal?: StopSignal): Promise<void>;
}

export type StopSignal = "SIGTERM" | "SIGINT" | "SIGKILL";

const live = new Set<ChildProcess>();
process.once("exit", () => {
  for (const child of live) child.kill("SIGKILL");
});

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

interface ProcessSpec {
  name: string;
  port: number;
  url: string;
  command: string;
  args: string[];
  uid?: number;
  gid?: number;
  ready: () => Promise<boolean>;
  readyTimeoutMs?: number;
  /** What a clean stop sends (default SIGTERM). */
  cleanStop?: StopSignal;
}

function managed(spec: ProcessSpec): OwnServer {
  let child: ChildProcess | undefined;
  let exited: Promise<void> = Promise.resolve();
  let output = "";
  const server: OwnServer = {
    name: spec.name,
    port: spec.port,
    url: spec.url,
    get running() {
      return child !== undefined;
    },
    async start() {
      if (child) return;
      output = "";
      const proc = spawn(spec.command, spec.args, { stdio: ["ignore", "pipe", "pipe"], uid: spec.uid, gid: spec.gid });
      child = proc;
      live.add(proc);
      const keep = (chunk: Buffer) => {
        output = (output + chunk.toString()).slice(-4_000);
      };
      proc.stdout?.on("data", keep);
      proc.stderr?.on("data", keep);
      exited = new Promise((resolve) => {
        proc.once("exit", () => {
          live.delete(proc);
          if (child === proc) child = undefined;
          resolve();
        });
      });
      const end = Date.now() + (spec.readyTimeoutMs ?? 30_000);
      while (Date.now() < end) {
        if (!child) throw new Error(`${spec.name} exited while starting:\n${output}`);
        if (await spec.ready().catch(() => false)) return;
        await sleep(50);
      }
      throw new Error(`${spec.name} not ready on port ${spec.port}:\n${output}`);
    },
    async stop(signal = "SIGTERM") {
      const proc = child;
      if (!proc) return;
      proc.kill("SIGCONT");
      proc.kill(signal === "SIGTERM" ? (spec.cleanStop ?? "SIGTERM") : signal);
      const timer = setTimeout(() => proc.kill("SIGKILL"), 15_000);
      await exited;
      clearTimeout(timer);
    },
    pause() {
      child?.kill("SIGSTOP");
    },
    resume() {
      child?.kill("SIGCONT");
    },
    async restart(signal) {
      await server.stop(signal);
      await server.start();
    },
  };
  return server;
}

/** A temp dir for a set of servers; `remove()` deletes it (after the servers stopped). */
export function ownServersDir(label = "tog-chaos"): { dir: string; remove(): void } {
  const dir = mkdtempSync(path.join(tmpdir(), `${label}-`));
  // PostgreSQL runs as its own user when we are root: it must reach its data directory.
  chmodSync(dir, 0o755);
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}

/** redis-server without persistence: a restart loses every key (what the Redis fault scenario needs). */
export async function startOwnRedis(dir: string): Promise<OwnServer> {
  const port = await freePort();
  const server = managed({
    name: "redis",
    port,
    url: `redis://127.0.0.1:${port}`,
    command: "redis-server",
    args: [
      "--port",
      String(port),
      "--bind",
      "127.0.0.1",
      "--save",
      "",
      "--appendonly",
      "no",
      "--dir",
      dir,
      "--protected-mode",
      "no",
    ],
    ready: () => canConnect(port),
  });
  await server.start();
  return server;
}

export interface OwnNatsOptions {
  /** Cluster of this many servers (JetStream replicas up to it); default 1. */
  cluster?: number;
}

export interface OwnNats {
  /** Comma-separated client URLs of every server (NATS_URL). */
  readonly url: string;
  readonly servers: OwnServer[];
  /** Each server's HTTP monitoring endpoint (`/varz`, `/connz`, …), in the order of `servers`. */
  readonly monitorUrls: string[];
  stopAll(): Promise<void>;
}

/** nats-server -js, or a cluster of them (JetStream meta group over routes). */
export async function startOwnNats(dir: string, options: OwnNatsOptions = {}): Promise<OwnNats> {
  const size = options.cluster ?? 1;
  const ports = await Promise.all(
    Array.from({ length: size }, async () => ({
      client: await freePort(),
      cluster: await freePort(),
      monitor: await freePort(),
    })),
  );
  const servers = ports.map((p, i) => {
    const name = size === 1 ? "nats" : `nats-${i + 1}`;
    const store = path.join(dir, name);
    mkdirSync(store, { recursive: true });
    const args = ["-js", "-a", "127.0.0.1", "-p", String(p.client), "-m", String(p.monitor), "-sd", store, "-n", name];
    if (size > 1) {
      const routes = ports
        .filter((_, j) => j !== i)
        .map((o) => `nats://127.0.0.1:${o.cluster}`)
        .join(",");
      args.push("--cluster_name", "chaos", "--cluster", `nats://127.0.0.1:${p.cluster}`, "--routes", routes);
    }
    return managed({
      name,
      port: p.client,
      url: `nats://127.0.0.1:${p.client}`,
      command: "nats-server",
      args,
      // JetStream is usable once /healthz says so; in a cluster only the full check (no
      // js-enabled-only) waits for the meta leader, without which JetStream's API times out.
      ready: async () =>
        (await fetch(`http://127.0.0.1:${p.monitor}/healthz${size > 1 ? "" : "?js-enabled-only=true"}`)).ok,
      readyTimeoutMs: 60_000,
    });
  });
  // Cluster members wait for each other's routes: start them together.
  await Promise.all(servers.map((s) => s.start()));
  return {
    url: servers.map((s) => s.url).join(","),
    servers,
    monitorUrls: ports.map((p) => `http://127.0.0.1:${p.monitor}`),
    stopAll: async () => {
      await Promise.all(servers.map((s) => s.stop()));
    },
  };
}

const PG_BIN = (() => {
  const base = "/usr/lib/postgresql";
  const versions = existsSync(base) ? readdirSync(base).sort((a, b) => Number(b) - Number(a)) : [];
  return versions.length > 0 ? path.join(base, versions[0]!, "bin") : "";
})();

/** Whether the distribution's servers this module starts are installed. */
export function ownServersAvailable(): boolean {
  const has = (cmd: string) => {
    try {
      execFileSync("sh", ["-c", `command -v ${cmd}`], { stdio: "ignore" });
      return true;
    } catch {
      return false;
    }
  };
  return has("redis-server") && has("nats-server") && PG_BIN !== "" && existsSync(path.join(PG_BIN, "postgres"));
}

/** A fresh PostgreSQL cluster (initdb, trust auth, superuser `postgres`); `url` points at database `postgres`. */
/** `settings`: more `-c name=value` settings, after and over the ones below. */
export async function startOwnPostgres(
  dir: string,
  options: { settings?: Record<string, string> } = {},
): Promise<OwnServer> {
  const port = await freePort();
  const data = path.join(dir, "pg");
  mkdirSync(data, { recursive: true, mode: 0o700 });
  // PostgreSQL refuses to run as root.
  let ids: { uid: number; gid: number } | undefined;
  if (process.getuid?.() === 0) {
    const uid = Number(execFileSync("id", ["-u", "postgres"]).toString().trim());
    const gid = Number(execFileSync("id", ["-g", "postgres"]).toString().trim());
    ids = { uid, gid };
    chownSync(data, uid, gid);
  }
  execFileSync(path.join(PG_BIN, "initdb"), ["-D", data, "-U", "postgres", "--auth=trust", "-E", "UTF8", "--no-sync"], {
    stdio: "ignore",
    ...(ids ?? {}),
  });
  const server = managed({
    name: "postgres",
    port,
    url: `postgresql://postgres@127.0.0.1:${port}/postgres`,
    command: path.join(PG_BIN, "postgres"),
    // Durability of the machine is not what the scenarios test (the process dies, not the OS).
    args: [
      "-D",
      data,
      "-p",
      String(port),
      "-k",
      data,
      "-c",
      "listen_addresses=127.0.0.1",
      "-c",
      "fsync=off",
      "-c",
      "max_connections=300",
      ...Object.entries(options.settings ?? {}).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
    ],
    ...(ids ?? {}),
    // SIGTERM would wait for every client to disconnect (smart shutdown).
    cleanStop: "SIGINT",
    ready: async () => {
      if (!(await canConnect(port))) return false;
      try {
        execFileSync(path.join(PG_BIN, "pg_isready"), ["-h", "127.0.0.1", "-p", String(port), "-q"], {
          stdio: "ignore",
        });
        return true;
      } catch {
        return false;
      }
    },
  });
  await server.start();
  return server;
}
