import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { canConnect } from "@tog/devstack";
import { REPO_ROOT } from "./tools.ts";

// The compose edge's nginx configuration, and running it on this machine against stand-in
// upstreams: only addresses change (Docker's service names → 127.0.0.1 ports); routing,
// buffering and timeouts are the file's own.

export const NGINX_CONF = path.join(REPO_ROOT, "deploy/nginx/nginx.conf");

const UPSTREAM = /http:\/\/([a-z][a-z0-9-]*):(\d+)/g;

/** The `http://<compose service>:<port>` upstreams the configuration proxies to. */
export function nginxUpstreams(conf: string): Array<{ host: string; port: number }> {
  const seen = new Map<string, { host: string; port: number }>();
  const code = conf.replace(/#.*$/gm, "");
  for (const m of code.matchAll(UPSTREAM)) seen.set(m[0], { host: m[1]!, port: Number(m[2]) });
  return [...seen.values()];
}

/**
 * The same configuration with local addresses, and temporary paths nginx may write to
 * (so it runs without root and leaves nothing behind).
 */
function localizeConf(
  conf: string,
  options: { listenPort: number; upstreams: Record<string, number>; dir: string },
): string {
  const { listenPort, upstreams, dir } = options;
  let out = conf.replace(/listen 8080;/, `listen 127.0.0.1:${listenPort};`);
  out = out.replace(UPSTREAM, (whole, host: string) =>
    upstreams[host] === undefined ? whole : `http://127.0.0.1:${upstreams[host]}`,
  );
  const temp = ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]
    .map((t) => `  ${t}_temp_path ${path.join(dir, t)};`)
    .join("\n");
  return out.replace(/^http \{$/m, `http {\n${temp}\n  access_log off;`);
}

export interface RunningNginx {
  port: number;
  stop(): Promise<void>;
}

/** Runs deploy/nginx/nginx.conf, localized, in the foreground until `stop`. */
export async function startNginx(
  nginx: string,
  options: { listenPort: number; upstreams: Record<string, number> },
): Promise<RunningNginx> {
  const dir = mkdtempSync(path.join(tmpdir(), "tog-nginx-"));
  const file = path.join(dir, "nginx.conf");
  writeFileSync(file, localizeConf(readFileSync(NGINX_CONF, "utf8"), { ...options, dir }));
  const stderr: string[] = [];
  const child: ChildProcess = spawn(
    nginx,
    [
      "-p",
      dir,
      "-c",
      file,
      "-e",
      "stderr",
      "-g",
      `daemon off; pid ${path.join(dir, "nginx.pid")}; error_log stderr warn;`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  child.stderr!.on("data", (d: Buffer) => stderr.push(d.toString()));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  const cleanup = () => rmSync(dir, { recursive: true, force: true });
  for (let i = 0; i < 100 && child.exitCode === null; i++) {
    if (await canConnect(options.listenPort)) {
      return {
        port: options.listenPort,
        async stop() {
          child.kill("SIGTERM");
          await exited;
          cleanup();
        },
      };
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  child.kill("SIGKILL");
  await exited;
  cleanup();
  throw new Error(`nginx did not start:\n${stderr.join("")}`);
}
