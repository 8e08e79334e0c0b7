import http from "node:http";
import type { Duplex } from "node:stream";
import type { AddressInfo } from "node:net";
import { createProxyServer } from "http-proxy-3";

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
  /** Reports upstream failures (the client gets a 502). */
  onError?: (err: Error, info: { method: string | undefined; url: string | undefined; target: string }) => void;
}

export interface Router {
  readonly port: number;
  readonly url: string;
  readonly server: http.Server;
  /** Replaces the routing table (e.g. after an instance restarts on another port). */
  setRoutes(routes: RouteRule[]): void;
  /** Stops accepting, then closes every open connection (streams included) after `graceMs`. */
  close(graceMs?: number): Promise<void>;
}

const UNAVAILABLE = JSON.stringify({ error: "Upstream unavailable" });
const NOT_FOUND = JSON.stringify({ error: "Not found" });

interface CompiledRule {
  prefix: string;
  targets: string[];
  proxyTimeoutMs: number | undefined;
  next: number;
}

function compile(routes: RouteRule[]): CompiledRule[] {
  return routes.map((r) => {
    if (r.targets.length === 0) throw new Error(`route ${r.prefix} has no targets`);
    return {
      prefix: r.prefix === "/" ? "" : r.prefix.replace(/\/+$/, ""),
      targets: [...r.targets],
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

function pick(rules: CompiledRule[], url: string | undefined): { rule: CompiledRule; target: string } | undefined {
  const path = pathOf(url);
  for (const rule of rules) {
    if (rule.prefix === "" || path === rule.prefix || path.startsWith(`${rule.prefix}/`)) {
      const target = rule.targets[rule.next % rule.targets.length]!;
      rule.next = (rule.next + 1) % rule.targets.length;
      return { rule, target };
    }
  }
  return undefined;
}

function sendJson(res: http.ServerResponse, status: number, body: string): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  res.writeHead(status, { "Content-Type": "application/json; charset=utf-8", "Content-Length": Buffer.byteLength(body) });
  res.end(body);
}

function rejectUpgrade(socket: Duplex, status: number, reason: string, body: string): void {
  if (!socket.writable) {
    socket.destroy();
    return;
  }
  socket.end(
    `HTTP/1.1 ${status} ${reason}\r\nContent-Type: application/json; charset=utf-8\r\n` +
      `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
  );
}

export async function startRouter(options: RouterOptions): Promise<Router> {
  let rules = compile(options.routes);
  const agent = new http.Agent({ keepAlive: true, maxSockets: 512 });
  const proxy = createProxyServer({ xfwd: true, ws: true });
  const upgraded = new Set<Duplex>();

  proxy.on("proxyRes", (proxyRes, _req, res) => {
    // An upstream that dies mid-response (crash, kill, restart) must cut the client's response
    // too, as nginx does; otherwise a stream client waits forever instead of reconnecting.
    proxyRes.once("close", () => {
      if (!proxyRes.complete) res.destroy();
    });
    // Event streams: send the status line and headers at once instead of with the first event.
    if (String(proxyRes.headers["content-type"] ?? "").startsWith("text/event-stream")) {
      queueMicrotask(() => {
        if (!res.headersSent) res.flushHeaders();
      });
    }
  });
  // Errors without a callback (e.g. after a WebSocket was established) must not crash the router.
  proxy.on("error", () => undefined);

  const server = http.createServer((req, res) => {
    const hit = pick(rules, req.url);
    if (!hit) {
      sendJson(res, 404, NOT_FOUND);
      return;
    }
    proxy.web(req, res, { target: hit.target, agent, proxyTimeout: hit.rule.proxyTimeoutMs }, (err) => {
      options.onError?.(err as Error, { method: req.method, url: req.url, target: hit.target });
      sendJson(res, 502, UNAVAILABLE);
    });
  });

  server.on("upgrade", (req: http.IncomingMessage, socket: Duplex, head: Buffer) => {
    upgraded.add(socket);
    socket.once("close", () => upgraded.delete(socket));
    socket.on("error", () => socket.destroy());
    const hit = pick(rules, req.url);
    if (!hit) {
      rejectUpgrade(socket, 404, "Not Found", NOT_FOUND);
      return;
    }
    proxy.ws(req, socket, head, { target: hit.target }, (err) => {
      options.onError?.(err as Error, { method: req.method, url: req.url, target: hit.target });
      rejectUpgrade(socket, 502, "Bad Gateway", UNAVAILABLE);
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
    server,
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
        agent.destroy();
      });
      return closing;
    },
  };
}
