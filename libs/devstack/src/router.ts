import http from "node:http";
import type { Duplex } from "node:stream";
import type { AddressInfo } from "node:net";
import { createProxyServer } from "http-proxy-3";
import { installJsonClientErrors, rawJsonError } from "@tog/core";
import { forward, parseTarget, Upstreams, type Target } from "./forward.ts";

// The local stand-in for the Kubernetes Ingress: one public port, routes chosen by path
// prefix (first match wins, matched per path segment like an Ingress `Prefix` path), round
// robin over each route's targets. Bodies are piped both ways, never buffered, so SSE
// flows event by event; WebSocket upgrades are tunnelled.

export interface RouteRule {
  /** Path prefix, matched per segment: `/api/v1/sessions` matches `/api/v1/sessions` and `/api/v1/sessions/x`, not `/api/v1/sessionsx`. */
  prefix: string;
  /** Upstream base URLs (`http://127.0.0.1:8081`), used in turn. */
  targets: string[];
  /** Upstream must start answering within this; unset: no limit (streams). */
  proxyTimeoutMs?: number;
}

export interface RouterOptions {
  port: number;
  host?: string;
  routes: RouteRule[];
  /** Whole request (headers + body) must arrive within this; else 408 JSON (docs/api.md "Limits": read 30 s). */
  readTimeoutMs?: number;
  /** Idle keep-alive client connections close after this (docs/api.md "Limits": idle 60 s). */
  idleTimeoutMs?: number;
  /**
   * A declared Content-Length above this is answered 413 here, at once, and the connection closed:
   * the upstream would refuse it too, but after closing on an unread body a reset can beat its
   * answer to the router (MAX_BODY_BYTES; default 1 MiB).
   */
  maxBodyBytes?: number;
  /** Reports upstream failures (the client gets a 502). */
  onError?: (err: Error, info: { method: string | undefined; url: string | undefined; target: string }) => void;
}

export interface Router {
  readonly port: number;
  readonly url: string;
  /** Processes of its own (nginx), for CPU accounting; the Node router runs in its caller's process. */
  pids?(): number[];
  /** Replaces the routing table (e.g. after an instance restarts on another port). */
  setRoutes(routes: RouteRule[]): void;
  /** Stops accepting, then closes every open connection (streams included) after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

const UNAVAILABLE = JSON.stringify({ error: "Upstream unavailable" });
const NOT_FOUND = JSON.stringify({ error: "Not found" });
const TOO_LARGE = JSON.stringify({ error: "Request body too large" });

interface CompiledRule {
  prefix: string;
  targets: string[];
  parsed: Target[];
  proxyTimeoutMs: number | undefined;
  next: number;
}

function compile(routes: RouteRule[]): CompiledRule[] {
  return routes.map((r) => {
    if (r.targets.length === 0) throw new Error(`route ${r.prefix} has no targets`);
    return {
      prefix: r.prefix === "/" ? "" : r.prefix.replace(/\/+$/, ""),
      targets: [...r.targets],
      parsed: r.targets.map(parseTarget),
      proxyTimeoutMs: r.proxyTimeoutMs,
      next: 0,
    };
  });
}

function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const q = raw.indexOf("?");
  return q === -1 ? raw : raw.slice(0, q);
}

function pick(
  rules: CompiledRule[],
  url: string | undefined,
): { rule: CompiledRule; target: string; parsed: Target } | undefined {
  const path = pathOf(url);
  for (const rule of rules) {
    if (rule.prefix === "" || path === rule.prefix || path.startsWith(`${rule.prefix}/`)) {
      const i = rule.next % rule.targets.length;
      rule.next = (rule.next + 1) % rule.targets.length;
      return { rule, target: rule.targets[i]!, parsed: rule.parsed[i]! };
    }
  }
  return undefined;
}

function sendJson(res: http.ServerResponse, status: number, body: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  if (res.socket?.writableEnded) return;
  res.writeHead(status, {
    "Content-Type": "application/json; charset=utf-8",
    "Content-Length": Buffer.byteLength(body),
    "X-Content-Type-Options": "nosniff",
    "Cache-Control": "no-store",
  });
  res.end(body);
}

function rejectUpgrade(socket: Duplex, status: number, message: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(rawJsonError(status, message));
}

export async function startRouter(options: RouterOptions): Promise<Router> {
  let rules = compile(options.routes);
  // No cap on upstream connections: idle SSE clients each hold one, and only the stream service's
  // own limit (STREAM_MAX_CONNECTIONS → 503) may refuse streams (docs/security.md).
  const upstreams = new Upstreams();
  // WebSocket upgrades only; plain requests take forward.ts.
  const proxy = createProxyServer({ xfwd: true, ws: true });
  const readTimeoutMs = options.readTimeoutMs ?? 30_000;
  const maxBodyBytes = options.maxBodyBytes ?? 1_048_576;
  const upgraded = new Set<Duplex>();
  // Errors without a callback (e.g. after a WebSocket was established) must not crash the router.
  proxy.on("error", () => undefined);

  const server = http.createServer(
    {
      // The documented read timeout (docs/api.md "Limits"), enforced here as at every service: a slowloris header or a
      // slow body gets 408 JSON after 30 s (installJsonClientErrors), not a 502 from upstream.
      requestTimeout: readTimeoutMs,
      headersTimeout: readTimeoutMs,
      connectionsCheckingInterval: Math.max(50, Math.min(1_000, Math.floor(readTimeoutMs / 4))),
    },
    (req, res) => {
      const hit = pick(rules, req.url);
      if (!hit) {
        sendJson(res, 404, NOT_FOUND);
        return;
      }
      const declared = req.headers["content-length"];
      if (declared !== undefined && Number(declared) > maxBodyBytes) {
        res.shouldKeepAlive = false;
        sendJson(res, 413, TOO_LARGE);
        return;
      }
      forward(req, res, hit.parsed, {
        upstreams,
        timeoutMs: hit.rule.proxyTimeoutMs,
        onError: (err) => {
          // The client went away: nobody to answer. Not `req.destroyed`: undici destroys the body
          // it was sending when the upstream stops reading it (a service closing after a 413),
          // and that client still waits for an answer.
          if (res.destroyed || !res.socket || res.socket.destroyed) return;
          options.onError?.(err, { method: req.method, url: req.url, target: hit.target });
          // The rest of the body is never read: the connection cannot carry another request.
          if (!req.complete) res.shouldKeepAlive = false;
          sendJson(res, 502, UNAVAILABLE);
        },
      });
    },
  );
  server.keepAliveTimeout = options.idleTimeoutMs ?? 60_000;
  installJsonClientErrors(server);

  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    socket.on("error", () => socket.destroy());
    const hit = pick(rules, req.url);
    if (!hit) {
      rejectUpgrade(socket, 404, "Not found");
      return;
    }
    proxy.ws(req, socket, head, { target: hit.target }, (err) => {
      options.onError?.(err as Error, { method: req.method, url: req.url, target: hit.target });
      rejectUpgrade(socket, 502, "Upstream unavailable");
    });
  });

  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(options.port, options.host ?? "0.0.0.0", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;

  let closing: Promise<void> | undefined;
  return {
    port,
    url: `http://127.0.0.1:${port}`,
    setRoutes(routes) {
      rules = compile(routes);
    },
    close(graceMs = 1_000) {
      closing ??= new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeIdleConnections();
        const timer = setTimeout(() => {
          server.closeAllConnections();
          for (const s of upgraded) s.destroy();
        }, graceMs);
        timer.unref();
      }).finally(() => {
        for (const s of upgraded) s.destroy();
        void upstreams.close();
      });
      return closing;
    },
  };
}
