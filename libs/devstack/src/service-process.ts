import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { createInterface } from "node:readline";
import { canConnect } from "./free-port.ts";
import { isListeningMessage } from "./listening-message.ts";

export type Env = Record<string, string | undefined>;

/** One captured output line; `json` is set when the line was a JSON object (pino). */
export interface OutputLine {
  stream: "stdout" | "stderr";
  text: string;
  json?: Record<string, unknown>;
}

export type LogRecord = Record<string, unknown>;

/** The log message with which every service reports its ops port (libs/ops startServiceOps). */
export const OPS_PORT_LOG = "ops port (metrics, health) listening";

export interface StartServiceOptions {
  /** Shown as `[name]` in echoed output and in errors. */
  name: string;
  /** Path of the `.ts`/`.js` file run with `process.execPath`. */
  entry: string;
  /** Added on top of a minimal inherited environment (PATH, HOME, …); nothing else leaks in. */
  env?: Env;
  args?: string[];
  cwd?: string;
  /** Port the process listens on; readiness is checked there. */
  port?: number;
  /** Its ops port (METRICS_PORT: /metrics, /health), when the caller assigned one. */
  metricsPort?: number;
  /** HTTP path that answers 200 when ready. With a port but no path: ready when the port accepts TCP. */
  readyPath?: string;
  readyTimeoutMs?: number;
  /**
   * "echo": also print each line prefixed with `[name]`; "capture" (default): keep in memory only;
   * "inherit" (`npm start`): stdout goes straight to this process' stdout, never through it, so
   * per-request log lines cost the supervisor (and the router in its process) nothing; stderr is
   * still captured for start-up failures. `logs()` and `waitForLog` then see stderr only.
   */
  logs?: "capture" | "echo" | "inherit";
  /** With "echo": turns a JSON log line into the text printed (npm start on a terminal: pino-pretty). */
  echoFormat?: (record: Record<string, unknown>, text: string) => string;
  /** Captured lines kept (oldest dropped first). */
  maxLines?: number;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

export interface RunningService {
  readonly name: string;
  readonly pid: number;
  readonly port: number | undefined;
  /** `http://127.0.0.1:<port>` (empty without a port). */
  readonly url: string;
  /** `http://127.0.0.1:<METRICS_PORT>` when one was assigned: GET /metrics, GET /health. */
  readonly metricsUrl: string | undefined;
  /** Settles when the process has exited. */
  readonly exited: Promise<ExitInfo>;
  readonly isRunning: boolean;
  /** Every captured line. */
  output(): OutputLine[];
  /** The JSON log records (pino lines), oldest first. */
  logs(): LogRecord[];
  /** Waits for a JSON log record matching `predicate` (already captured or future). */
  waitForLog(predicate: (record: LogRecord) => boolean, timeoutMs?: number): Promise<LogRecord>;
  /** SIGTERM, then SIGKILL after `graceMs` (default 10 s). */
  stop(graceMs?: number): Promise<ExitInfo>;
  /** SIGKILL now. */
  kill(): Promise<ExitInfo>;
}

// NODE_COMPILE_CACHE: Node's on-disk code cache, which scripts/prepare.sh turns on; every service
// start then skips most of its modules' compilation (docs/contributing.md "Tests").
const INHERITED = [
  "PATH",
  "HOME",
  "TMPDIR",
  "TEMP",
  "TMP",
  "TZ",
  "LANG",
  "LC_ALL",
  "USER",
  "SystemRoot",
  "NODE_COMPILE_CACHE",
];
const GUARD = new URL("./parent-guard.ts", import.meta.url).href;
// Every service starts with the telemetry preload, as in the container images: it instruments
// only when spans are exported (docs/architecture.md, "Tracing").
const TELEMETRY_PRELOAD = import.meta.resolve("@tog/core/preload");

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  // Last resort when the parent exits without stopping its children.
  process.on("exit", () => {
    for (const child of live) child.kill("SIGKILL");
  });
}

/** Environment for a child: a few harmless inherited variables plus `env` (undefined values dropped). */
export function childEnv(env: Env = {}, inherit: Env = process.env): Record<string, string> {
  const out: Record<string, string> = {};
  for (const key of INHERITED) {
    const v = inherit[key];
    if (v !== undefined) out[key] = v;
  }
  for (const [k, v] of Object.entries(env)) if (v !== undefined) out[k] = v;
  return out;
}

export class ServiceStartError extends Error {
  override name = "ServiceStartError";
}

/**
 * Runs `entry` as its own OS process, captures its output, and resolves when it is ready.
 * If it exits or does not become ready in time, the promise rejects with the captured output.
 */
export async function startService(options: StartServiceOptions): Promise<RunningService> {
  if (!existsSync(options.entry)) throw new ServiceStartError(`${options.name}: entry ${options.entry} does not exist`);
  installExitHook();
  const maxLines = options.maxLines ?? 20_000;
  const lines: OutputLine[] = [];
  const waiters = new Set<(line: OutputLine) => void>();

  const child = spawn(
    process.execPath,
    ["--import", GUARD, "--import", TELEMETRY_PRELOAD, options.entry, ...(options.args ?? [])],
    {
      cwd: options.cwd,
      env: childEnv(options.env),
      stdio: ["ignore", options.logs === "inherit" ? "inherit" : "pipe", "pipe", "ipc"],
      // Own process group: a terminal's Ctrl-C reaches only the parent, which then stops
      // children in order (router first) instead of every process racing to exit.
      detached: true,
    },
  );
  live.add(child);
  child.channel?.unref();

  const exited = new Promise<ExitInfo>((resolve) => {
    child.once("exit", (code, signal) => {
      live.delete(child);
      resolve({ code, signal });
    });
  });
  let running = true;
  void exited.then(() => (running = false));
  // Ports this very process reported binding (parent-guard.ts): only then is a probe on the
  // port known to reach it rather than whatever took the port first.
  const bound = new Set<number>();
  child.on("message", (message) => {
    if (isListeningMessage(message)) bound.add(message.port);
  });
  const spawnError = new Promise<never>((_, reject) => child.once("error", reject));
  spawnError.catch(() => undefined);

  const capture = (stream: "stdout" | "stderr") => (text: string) => {
    const line: OutputLine = { stream, text };
    if (text.startsWith("{")) {
      try {
        const parsed: unknown = JSON.parse(text);
        if (parsed && typeof parsed === "object" && !Array.isArray(parsed))
          line.json = parsed as Record<string, unknown>;
      } catch {
        // not JSON: kept as text
      }
    }
    lines.push(line);
    // trim in batches, not one line at a time
    if (lines.length > maxLines * 1.25) lines.splice(0, lines.length - maxLines);
    if (options.logs === "echo" || (options.logs === "inherit" && stream === "stderr")) {
      const shown = line.json && options.echoFormat ? options.echoFormat(line.json, text).replace(/\n$/, "") : text;
      (stream === "stderr" ? process.stderr : process.stdout).write(`[${options.name}] ${shown}\n`);
    }
    for (const w of waiters) w(line);
  };
  if (child.stdout) createInterface({ input: child.stdout }).on("line", capture("stdout"));
  createInterface({ input: child.stderr! }).on("line", capture("stderr"));

  const tail = () =>
    lines
      .slice(-40)
      .map((l) => l.text)
      .join("\n");
  let stopRequested = false;
  const signalAndWait = async (signal: NodeJS.Signals, graceMs: number): Promise<ExitInfo> => {
    stopRequested = true;
    if (!running) return exited;
    child.kill(signal);
    if (signal === "SIGKILL") return exited;
    let timer: NodeJS.Timeout | undefined;
    const forced = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, graceMs);
    });
    await Promise.race([exited, forced]);
    clearTimeout(timer);
    if (running) child.kill("SIGKILL");
    return exited;
  };

  const port = options.port;
  const service: RunningService = {
    name: options.name,
    pid: child.pid ?? -1,
    port,
    url: port ? `http://127.0.0.1:${port}` : "",
    // A fixed METRICS_PORT, or the port the process reports in its "ops port" log line (METRICS_PORT=0).
    get metricsUrl() {
      if (options.metricsPort) return `http://127.0.0.1:${options.metricsPort}`;
      const record = service.logs().find((r) => r.msg === OPS_PORT_LOG && typeof r.port === "number");
      return record ? `http://127.0.0.1:${String(record.port)}` : undefined;
    },
    exited,
    get isRunning() {
      return running;
    },
    output: () => [...lines],
    logs: () => lines.flatMap((l) => (l.json ? [l.json] : [])),
    waitForLog(predicate, timeoutMs = 10_000) {
      const found = lines.find((l) => l.json && predicate(l.json));
      if (found?.json) return Promise.resolve(found.json);
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(waiter);
          reject(new Error(`${options.name}: no matching log line within ${timeoutMs} ms`));
        }, timeoutMs);
        const waiter = (line: OutputLine) => {
          if (line.json && predicate(line.json)) {
            clearTimeout(timer);
            waiters.delete(waiter);
            resolve(line.json);
          }
        };
        waiters.add(waiter);
      });
    },
    stop: (graceMs = 10_000) => signalAndWait("SIGTERM", graceMs),
    kill: () => signalAndWait("SIGKILL", 0),
  };

  let startAborted = false;
  try {
    await Promise.race([
      spawnError,
      exited.then((info) => {
        throw new ServiceStartError(
          `${options.name} exited during start-up (code ${info.code}, signal ${info.signal}). Output:\n${tail()}`,
        );
      }),
      waitUntilReady(
        options,
        () => running && !startAborted,
        (p) => bound.has(p),
      ),
    ]);
  } catch (err) {
    startAborted = true;
    await service.kill();
    if (err instanceof ServiceStartError) throw err;
    throw new ServiceStartError(`${options.name}: ${(err as Error).message}. Output:\n${tail()}`, { cause: err });
  }
  // A service that dies on its own makes the tests after it fail with 502s that do not say why;
  // its last output on stderr does.
  void exited.then((info) => {
    if (!stopRequested)
      process.stderr.write(
        `[devstack] ${options.name} (pid ${service.pid}) exited unexpectedly (code ${info.code}, signal ${info.signal}); last output:\n${tail()}\n`,
      );
  });
  return service;
}

async function waitUntilReady(
  options: StartServiceOptions,
  alive: () => boolean,
  hasBound: (port: number) => boolean,
): Promise<void> {
  const { port, readyPath } = options;
  if (!port) return;
  const deadline = Date.now() + (options.readyTimeoutMs ?? 30_000);
  const url = readyPath ? `http://127.0.0.1:${port}${readyPath}` : undefined;
  let last = "no answer";
  while (Date.now() < deadline && alive()) {
    if (!hasBound(port)) {
      last = `port ${port} not bound by the process yet`;
    } else if (url) {
      try {
        const res = await fetch(url, { signal: AbortSignal.timeout(1_000) });
        await res.body?.cancel();
        if (res.status === 200) return;
        last = `GET ${readyPath} answered ${res.status}`;
      } catch (err) {
        last = `GET ${readyPath} failed: ${(err as Error).message}`;
      }
    } else if (await canConnect(port)) {
      return;
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  throw new Error(`not ready within ${options.readyTimeoutMs ?? 30_000} ms (${last})`);
}
