import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { accessSync, constants, existsSync, mkdtempSync, writeFileSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { freePort } from "./free-port.ts";
import type { RouteRule, Router, RouterOptions } from "./router.ts";

// The public port served by nginx instead of the Node router (docs/performance.md "The public
// port"): the same routing table, JSON errors and limits, but the proxying costs a fraction of
// a Node hop. Only the process and its configuration file are managed here; nginx itself comes
// from the distribution (scripts/ensure-infra.sh installs it where apt-get can).

const GUARD = new URL("./parent-guard.ts", import.meta.url).href;
const NGINX_CHILD = fileURLToPath(new URL("./nginx-child.ts", import.meta.url));
const CANDIDATES = [
  "/usr/sbin/nginx",
  "/usr/local/sbin/nginx",
  "/usr/local/nginx/sbin/nginx",
  "/opt/homebrew/bin/nginx",
];

/** The nginx binary: `NGINX_BIN` if given, else `nginx` on PATH or a usual location; undefined when none runs. */
export function findNginx(explicit?: string): string | undefined {
  const onPath = (process.env.PATH ?? "").split(path.delimiter).map((d) => path.join(d, "nginx"));
  for (const candidate of explicit ? [explicit] : [...onPath, ...CANDIDATES]) {
    try {
      accessSync(candidate, constants.X_OK);
    } catch {
      continue;
    }
    if (spawnSync(candidate, ["-v"], { stdio: "ignore" }).status === 0) return candidate;
  }
  return undefined;
}

export interface NginxRouterOptions extends RouterOptions {
  /** The binary (default: findNginx()). */
  bin?: string;
  /** nginx's warnings and errors (stderr), line by line. */
  onLog?: ((line: string) => void) | undefined;
}

export interface NginxRouter extends Router {
  /** The processes serving the port (a small supervisor first, then nginx's master and workers), for CPU accounting. */
  pids(): number[];
  /** nginx's prefix directory (its configuration and temp files), removed when it stops. */
  readonly prefix: string;
}

const json = (body: string) => `'${JSON.stringify({ error: body })}'`;

/** nginx's own answers, each as the JSON the Node router and the services give, with their headers. */
const ERROR_LOCATIONS = (
  [
    ["too_large", 413, "Request body too large"],
    ["timeout", 408, "Request timeout"],
    ["header_too_large", 431, "Request header fields too large"],
    ["bad_request", 400, "Bad request: malformed HTTP request"],
    ["unavailable", 502, "Upstream unavailable"],
  ] as const
)
  .map(
    ([name, status, message]) =>
      `    location @${name} { add_header X-Content-Type-Options nosniff always; add_header Cache-Control no-store always; return ${status} ${json(message)}; }`,
  )
  .join("\n");

/** nginx configuration for the routing table: see docs/decisions.md "nginx on the public port". */
export function nginxConfig(options: RouterOptions & { port: number; dir: string; runAsRoot: boolean }): string {
  const routes = [...options.routes].sort((a, b) => b.prefix.length - a.prefix.length);
  const readSeconds = Math.max(1, Math.ceil((options.readTimeoutMs ?? 30_000) / 1000));
  const idleSeconds = Math.max(1, Math.ceil((options.idleTimeoutMs ?? 60_000) / 1000));
  const upstreams: string[] = [];
  const locations: string[] = [];
  let catchAll = false;
  routes.forEach((route, i) => {
    if (route.targets.length === 0) throw new Error(`route ${route.prefix} has no targets`);
    const servers = route.targets.map((t) => `    server ${new URL(t).host} max_fails=0;`).join("\n");
    // keep-alive to the upstream; a free connection closes after 4 s, under the services' own timeout
    upstreams.push(`  upstream route${i} {\n${servers}\n    keepalive 256;\n    keepalive_timeout 4s;\n  }`);
    // no limit (streams): a day; the stream service's keep-alives keep such a connection busy
    const timeout =
      route.proxyTimeoutMs === undefined ? "86400s" : `${Math.max(1, Math.ceil(route.proxyTimeoutMs / 1000))}s`;
    // Unbuffered, nginx relays a response through one buffer of proxy_buffer_size (a page, 4 KiB, by
    // default): a 663 KB session history took ~160 reads and writes. Bounded routes get 64 KiB;
    // streams keep the page, since their buffer lives as long as the stream (docs/decisions.md
    // "nginx on the public port").
    const buffers =
      route.proxyTimeoutMs === undefined
        ? ""
        : " proxy_buffer_size 64k; proxy_buffers 4 64k; proxy_busy_buffers_size 128k;";
    const body = `{ proxy_pass http://route${i}; proxy_read_timeout ${timeout}; proxy_send_timeout ${timeout};${buffers} }`;
    const prefix = route.prefix.replace(/\/+$/, "");
    if (prefix === "") {
      catchAll = true;
      locations.push(`    location / ${body}`);
    } else {
      // matched per path segment, like an Ingress `Prefix` path: `/p` and `/p/…`, not `/px`
      locations.push(`    location = ${prefix} ${body}`, `    location ${prefix}/ ${body}`);
    }
  });
  if (!catchAll) locations.push(`    location / { return 404 ${json("Not found")}; }`);
  const temp = (name: string) => path.join(options.dir, name);
  return `${options.runAsRoot ? "user root;\n" : ""}worker_processes 1;
daemon off;
master_process on;
pid ${temp("nginx.pid")};
error_log stderr warn;
events { worker_connections 16384; }
http {
  access_log off;
  server_tokens off;
  client_body_temp_path ${temp("body")};
  proxy_temp_path ${temp("proxy")};
  fastcgi_temp_path ${temp("fastcgi")};
  uwsgi_temp_path ${temp("uwsgi")};
  scgi_temp_path ${temp("scgi")};
  map $http_upgrade $connection_upgrade { default upgrade; "" ""; }
${upstreams.join("\n")}
  server {
    listen ${options.host ?? "0.0.0.0"}:${options.port};
    keepalive_timeout ${idleSeconds}s;
    keepalive_requests 1000000;
    client_header_timeout ${readSeconds}s;
    client_body_timeout ${readSeconds}s;
    client_max_body_size ${options.maxBodyBytes ?? 1_048_576};
    default_type "application/json; charset=utf-8";
    proxy_http_version 1.1;
    proxy_set_header Host $http_host;
    proxy_set_header Connection $connection_upgrade;
    proxy_set_header Upgrade $http_upgrade;
    proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
    proxy_set_header X-Forwarded-Host $http_host;
    proxy_set_header X-Forwarded-Proto $scheme;
    proxy_set_header X-Forwarded-Port $server_port;
    # bodies flow both ways as they come: SSE event by event, uploads streamed
    proxy_buffering off;
    proxy_request_buffering off;
    proxy_connect_timeout 5s;
    # a POST is never sent twice; a connection refused is tried on the route's next target
    proxy_next_upstream error timeout;
    error_page 413 @too_large;
    error_page 408 @timeout;
    # 494: nginx's own code for a header over large_client_header_buffers (sent as 400)
    error_page 494 =431 @header_too_large;
    error_page 400 @bad_request;
    error_page 502 503 504 @unavailable;
${ERROR_LOCATIONS}
${locations.join("\n")}
  }
}
`;
}

/** Starts nginx on `options.port` (0: a free one) with the routing table; resolves once it listens. */
export async function startNginxRouter(options: NginxRouterOptions): Promise<NginxRouter> {
  const bin = options.bin ?? findNginx();
  if (!bin) throw new Error("nginx not found (install it, or set NGINX_BIN)");
  // A port picked free can be taken before nginx binds it (parallel test files): pick another.
  for (let attempt = 1; ; attempt++) {
    const port = options.port === 0 ? await freePort() : options.port;
    try {
      return await launch(bin, port, options);
    } catch (err) {
      if (!(err instanceof PortTakenError) || options.port !== 0 || attempt >= 3) throw err;
    }
  }
}

class PortTakenError extends Error {}

async function launch(bin: string, port: number, options: NginxRouterOptions): Promise<NginxRouter> {
  const dir = mkdtempSync(path.join(os.tmpdir(), "tog-nginx-"));
  const conf = path.join(dir, "nginx.conf");
  const runAsRoot = process.getuid?.() === 0;
  let routes: RouteRule[] = options.routes;
  const write = () => writeFileSync(conf, nginxConfig({ ...options, routes, port, dir, runAsRoot }));
  write();

  const output: string[] = [];
  // Through nginx-child.ts, with the parent guard: nginx stops when this process dies, however it
  // dies, and its prefix directory goes with it.
  const child: ChildProcess = spawn(process.execPath, ["--import", GUARD, NGINX_CHILD, bin, "-p", dir, "-c", conf], {
    stdio: ["ignore", "ignore", "pipe", "ipc"],
  });
  child.channel?.unref();
  child.stderr?.setEncoding("utf8");
  child.stderr?.on("data", (chunk: string) => {
    output.push(chunk);
    if (output.length > 200) output.shift();
    if (options.onLog) for (const line of chunk.split("\n")) if (line.trim()) options.onLog(line);
  });
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  let running = true;
  void exited.then(() => {
    running = false;
  });

  // nginx writes its pid file only after it has bound its listening sockets: a connect to the port
  // alone could reach whatever took the port first.
  const pidFile = path.join(dir, "nginx.pid");
  const deadline = Date.now() + 10_000;
  while (!(running && existsSync(pidFile))) {
    if (!running || Date.now() > deadline) {
      child.kill("SIGKILL");
      await exited;
      const said = output.join("").trim();
      if (said.includes("Address already in use")) throw new PortTakenError(`port ${port} is taken: ${said}`);
      throw new Error(`nginx did not start on port ${port}: ${said || "no output"}`);
    }
    await new Promise((r) => setTimeout(r, 20));
  }

  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    prefix: dir,
    pids() {
      if (!running || child.pid === undefined) return [];
      const out: number[] = [child.pid];
      for (let i = 0; i < out.length; i++) {
        const found = spawnSync("pgrep", ["-P", String(out[i])], { encoding: "utf8" });
        out.push(...found.stdout.split(/\s+/).filter(Boolean).map(Number));
      }
      return out;
    },
    setRoutes(next) {
      routes = next;
      write();
      // a reload: new workers take the table, old ones finish what they serve
      child.kill("SIGHUP");
    },
    close(graceMs = 1_000) {
      closing ??= (async () => {
        if (!running) return;
        // graceful: stop accepting, finish requests in flight; then fast shutdown
        child.kill("SIGQUIT");
        const timer = setTimeout(() => child.kill("SIGTERM"), graceMs);
        await exited;
        clearTimeout(timer);
      })();
      return closing;
    },
  };
}
