import http from "node:http";
import type { AddressInfo } from "node:net";
import type { Express } from "express";
import { installJsonClientErrors } from "@tog/core";

export interface ServerTimeouts {
  /** Whole request (headers + body) must arrive within this (docs/api.md "Limits": read 30 s). */
  readTimeoutMs: number;
  /**
   * Non-streaming responses must finish within this (docs/api.md "Limits": write 30 s): one not
   * started by then is answered 503 + Retry-After, one started is cut.
   */
  writeTimeoutMs: number;
  /** Idle keep-alive connections close after this (docs/api.md "Limits": idle 60 s). */
  idleTimeoutMs: number;
}

export const CONTRACT_TIMEOUTS: ServerTimeouts = {
  readTimeoutMs: 30_000,
  writeTimeoutMs: 30_000,
  idleTimeoutMs: 60_000,
};

export interface StartedServer {
  server: http.Server;
  port: number;
  /** Stops accepting, lets in-flight requests finish, closes idle keep-alive sockets. */
  close(): Promise<void>;
}

/**
 * Listens with the documented timeouts (docs/api.md "Limits"). The write timeout is a per-response timer that
 * streaming routes switch off by calling `markStreaming(res)`.
 */
export async function startHttpServer(
  app: Express,
  options: { port: number; host?: string; timeouts?: ServerTimeouts },
): Promise<StartedServer> {
  const t = options.timeouts ?? CONTRACT_TIMEOUTS;
  const server = http.createServer(
    {
      requestTimeout: t.readTimeoutMs,
      headersTimeout: Math.min(t.readTimeoutMs, 20_000),
      // Node enforces the two timeouts above only on this sweep (default every 30 s).
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(t.readTimeoutMs / 4))),
    },
    app,
  );
  server.keepAliveTimeout = t.idleTimeoutMs;
  // Parser errors, read timeouts and unmet Expect headers get JSON bodies too.
  installJsonClientErrors(server);
  server.on("request", (_req, res: http.ServerResponse) => {
    const timer = setTimeout(() => {
      if ((res as StreamingFlag)[STREAMING] || res.writableEnded) return;
      // Not started yet (it waited for a saturated dependency): an answer the client can act on —
      // 503 + Retry-After — rather than a reset a proxy in front turns into a 502 (docs/reliability.md
      // "Overload"). The connection closes after it: the handler may still try to write.
      if (!res.headersSent) {
        res.shouldKeepAlive = false;
        res.writeHead(503, {
          "Content-Type": "application/json; charset=utf-8",
          "Retry-After": "1",
          "Cache-Control": "no-store",
        });
        res.end(WRITE_TIMEOUT_BODY);
        return;
      }
      res.destroy();
    }, t.writeTimeoutMs);
    timer.unref();
    res.once("close", () => clearTimeout(timer));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "0.0.0.0", () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  return {
    server,
    port,
    close: () =>
      new Promise<void>((resolve) => {
        // A request in flight at close() leaves its socket idle when it ends; a keep-alive client
        // (a proxy's upstream pool) would hold that socket, and the close, until its own idle
        // timeout. Sweeping idle sockets until the close completes ends each one as it frees.
        const sweep = setInterval(() => server.closeIdleConnections(), 50);
        server.close(() => {
          clearInterval(sweep);
          resolve();
        });
        server.closeIdleConnections();
      }),
  };
}

const STREAMING = Symbol("streaming");
const WRITE_TIMEOUT_BODY = JSON.stringify({ error: "Request timed out" });
type StreamingFlag = { [STREAMING]?: boolean };

/** Exempts a long-lived response (SSE, upgraded socket) from the write timeout. */
export function markStreaming(res: http.ServerResponse): void {
  (res as StreamingFlag)[STREAMING] = true;
}
