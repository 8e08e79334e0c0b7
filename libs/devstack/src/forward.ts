import type http from "node:http";
import { Pool } from "undici";

// The router's plain-HTTP path (WebSocket upgrades go through http-proxy-3): one upstream request
// per client request on undici's keep-alive pools, headers copied once from the raw arrays, the
// answer written straight into the client's response with backpressure. undici, not
// `http.request`: its client costs about a third less CPU per proxied request, and every request
// of `npm start` pays for this hop (docs/performance.md "The public port").

/** Hop-by-hop headers (RFC 9110 7.6.1): never forwarded in either direction. */
const HOP_BY_HOP = new Set([
  "connection",
  "keep-alive",
  "proxy-connection",
  "proxy-authenticate",
  "proxy-authorization",
  "te",
  "trailer",
  "transfer-encoding",
  "upgrade",
]);
/** Request headers this hop answered itself (the router's server already sent `100 Continue`). */
const ANSWERED_HERE = "expect";
const FORWARDED = new Set(["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port"]);
/** Bodies up to this size with a declared length are read whole and sent as one buffer (cheaper than piping). */
const BUFFERED_BODY_BYTES = 65_536;

export interface Target {
  origin: string;
}

export function parseTarget(url: string): Target {
  return { origin: new URL(url).origin };
}

/** One keep-alive pool per upstream origin; no cap on connections (idle SSE clients each hold one). */
export class Upstreams {
  readonly #pools = new Map<string, Pool>();

  pool(target: Target): Pool {
    let pool = this.#pools.get(target.origin);
    if (!pool) {
      // Timeouts are set per request (a stream has none); a free connection closes after 4 s idle,
      // under the services' own keep-alive timeout, so the router never reuses one being closed.
      pool = new Pool(target.origin, {
        connections: null,
        pipelining: 1,
        keepAliveTimeout: 4_000,
        headersTimeout: 0,
        bodyTimeout: 0,
      });
      this.#pools.set(target.origin, pool);
    }
    return pool;
  }

  async close(): Promise<void> {
    const pools = [...this.#pools.values()];
    this.#pools.clear();
    await Promise.all(pools.map((p) => p.destroy()));
  }
}

export interface ForwardOptions {
  upstreams: Upstreams;
  /** Upstream must start answering within this; unset: no limit (streams). */
  timeoutMs: number | undefined;
  /** The upstream failed before answering (the caller answers 502). */
  onError: (err: Error) => void;
}

/** Forwards one request to `target` and pipes the answer back. */
export function forward(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: Target,
  options: ForwardOptions,
): void {
  const raw = req.rawHeaders;
  const headers: string[] = [];
  let xff: string | undefined;
  let chunked = false;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === ANSWERED_HERE) continue;
    if (HOP_BY_HOP.has(lower)) {
      // A chunked request body stays chunked: undici frames a stream body that way itself.
      if (lower === "transfer-encoding") chunked = true;
      continue;
    }
    if (FORWARDED.has(lower)) {
      if (lower === "x-forwarded-for") xff = xff === undefined ? raw[i + 1]! : `${xff}, ${raw[i + 1]!}`;
      continue;
    }
    headers.push(name, raw[i + 1]!);
  }
  const remote = req.socket.remoteAddress ?? "";
  headers.push(
    "X-Forwarded-For",
    xff === undefined ? remote : `${xff}, ${remote}`,
    "X-Forwarded-Host",
    req.headers.host ?? "",
    "X-Forwarded-Proto",
    "http",
    "X-Forwarded-Port",
    String(req.socket.localPort ?? ""),
  );

  const declared = req.headers["content-length"];
  const length = declared === undefined ? 0 : Number(declared);
  if (!chunked && length > 0 && length <= BUFFERED_BODY_BYTES) {
    const chunks: Buffer[] = [];
    req.on("data", (c: Buffer) => chunks.push(c));
    req.on("end", () =>
      send(req, res, target, headers, chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks), options),
    );
    return;
  }
  send(req, res, target, headers, chunked || length > 0 ? req : null, options);
}

function send(
  req: http.IncomingMessage,
  res: http.ServerResponse,
  target: Target,
  headers: string[],
  body: Buffer | http.IncomingMessage | null,
  options: ForwardOptions,
): void {
  if (res.destroyed) return;
  const abort = new AbortController();
  let answered = false;
  // The client went away before the answer ended: stop the upstream request too.
  res.once("close", () => {
    if (!res.writableFinished) abort.abort();
  });
  options.upstreams.pool(target).stream(
    {
      path: req.url ?? "/",
      method: req.method as "GET",
      headers,
      body,
      signal: abort.signal,
      // undici's own timeouts: until the status line (the route's limit) and between body
      // chunks (none: an idle event stream is fine).
      headersTimeout: options.timeoutMs ?? 0,
      bodyTimeout: 0,
    },
    ({ statusCode, headers: answer }) => {
      answered = true;
      const out: string[] = [];
      let eventStream = false;
      for (const name in answer) {
        const value = answer[name];
        if (value === undefined) continue;
        if (HOP_BY_HOP.has(name)) continue;
        if (Array.isArray(value)) for (const v of value) out.push(name, v);
        else {
          if (name === "content-type" && value.startsWith("text/event-stream")) eventStream = true;
          out.push(name, value);
        }
      }
      // The upstream answered before the client finished sending its body (a refusal: 404, 413,
      // 415…): close the client connection after the answer. Nobody reads the rest of that body,
      // so the connection could never carry another request, and a client pipelining or reusing
      // it would wait for ever.
      if (!req.complete && body !== null) out.push("Connection", "close");
      res.writeHead(statusCode, out);
      // Event streams: status line and headers now, not with the first event.
      if (eventStream) res.flushHeaders();
      return res;
    },
    (err) => {
      if (!err) return;
      // An upstream that dies mid-response (crash, kill, restart) cuts the client's response
      // too, as nginx does; otherwise a stream client waits forever instead of reconnecting.
      if (answered || res.headersSent) res.destroy();
      else if (!abort.signal.aborted) options.onError(err);
    },
  );
}
