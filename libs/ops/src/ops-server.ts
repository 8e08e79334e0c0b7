import { createServer, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { installJsonClientErrors } from "@tog/core";
import type { Metrics } from "./metrics.ts";

// The internal ops port: GET /metrics for Prometheus and GET /health for probes of processes
// without a public HTTP port (orchestrator, workers). A plain node:http server: nothing of the
// public middleware stack (auth, CORS, limits) belongs here, but its errors are JSON like every
// other port's, Node's parser errors included (docs/security.md, "Bad input").

export interface OpsServer {
  readonly port: number;
  close(): Promise<void>;
}

export interface OpsServerOptions {
  metrics: Metrics;
  port: number;
  host: string;
  /** Liveness: resolves when the process can do its work; rejects (or false) → 503. */
  health?: () => Promise<boolean | void>;
}

export async function startOpsServer(options: OpsServerOptions): Promise<OpsServer> {
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? "/").split("?")[0];
    if (req.method === "GET" && path === "/metrics") {
      options.metrics.registry.metrics().then(
        (text) => {
          res.writeHead(200, {
            "Content-Type": options.metrics.registry.contentType,
            "X-Content-Type-Options": "nosniff",
            "Cache-Control": "no-store",
          });
          res.end(text);
        },
        () => json(res, 500, { error: "Internal server error" }),
      );
      return;
    }
    if (req.method === "GET" && path === "/health") {
      (options.health ?? (async () => true))().then(
        (ok) => json(res, ok === false ? 503 : 200, { status: ok === false ? "unhealthy" : "healthy" }),
        () => json(res, 503, { status: "unhealthy" }),
      );
      return;
    }
    json(res, 404, { error: "Not found" });
  });
  installJsonClientErrors(server);
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host, () => resolve());
  });
  return {
    port: (server.address() as AddressInfo).port,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}

function json(res: ServerResponse, status: number, body: Record<string, unknown>): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(text),
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
  });
  res.end(text);
}

/**
 * The ops port of a service, closed in the last shutdown stage so probes and scrapes keep
 * answering while the service drains.
 */
export async function startServiceOps(
  options: OpsServerOptions & {
    lifecycle: { on(stage: "clients", name: string, fn: () => Promise<void>): unknown };
    logger: { info(obj: object, msg: string): void };
  },
): Promise<OpsServer> {
  const ops = await startOpsServer(options);
  options.lifecycle.on("clients", "ops-port", () => ops.close());
  options.logger.info({ port: ops.port }, "ops port (metrics, health) listening");
  return ops;
}
