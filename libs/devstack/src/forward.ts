import http from "node:http";

// The router's plain-HTTP path (WebSocket upgrades go through http-proxy-3): one upstream request
// per client request on a keep-alive agent, headers copied once from the raw arrays, bodies piped
// both ways. Kept this lean because every request of `npm start` pays for it (issue 10: the
// public port must cost well under half of the gateway's own work per request).

/** Hop-by-hop headers (RFC 9110 7.6.1): never forwarded in either direction. */
const HOP_BY_HOP = new Set(["connection", "keep-alive", "proxy-connection", "proxy-authenticate", "proxy-authorization", "te", "trailer", "transfer-encoding", "upgrade"]);
/** Request headers this hop answered itself (the router's server already sent `100 Continue`). */
const ANSWERED_HERE = "expect";
const FORWARDED = new Set(["x-forwarded-for", "x-forwarded-host", "x-forwarded-proto", "x-forwarded-port"]);

export interface Target {
  hostname: string;
  port: number;
}

export function parseTarget(url: string): Target {
  const u = new URL(url);
  return { hostname: u.hostname, port: Number(u.port || 80) };
}

export interface ForwardOptions {
  agent: http.Agent;
  /** Upstream must start answering within this; unset: no limit (streams). */
  timeoutMs: number | undefined;
  /** The upstream failed before answering (the caller answers 502). */
  onError: (err: Error) => void;
}

/** Forwards one request to `target` and pipes the answer back. */
export function forward(req: http.IncomingMessage, res: http.ServerResponse, target: Target, options: ForwardOptions): void {
  const raw = req.rawHeaders;
  const headers: string[] = [];
  let xff: string | undefined;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!;
    const lower = name.toLowerCase();
    if (lower === ANSWERED_HERE) continue;
    if (HOP_BY_HOP.has(lower)) {
      // A request body's framing is kept: the upstream request re-frames it the same way.
      if (lower === "transfer-encoding") headers.push(name, raw[i + 1]!);
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
    "X-Forwarded-For", xff === undefined ? remote : `${xff}, ${remote}`,
    "X-Forwarded-Host", req.headers.host ?? "",
    "X-Forwarded-Proto", "http",
    "X-Forwarded-Port", String(req.socket.localPort ?? ""),
  );

  const upstream = http.request({
    agent: options.agent,
    hostname: target.hostname,
    port: target.port,
    method: req.method,
    path: req.url,
    headers,
    setHost: false,
  });
  let failed = false;
  const fail = (err: Error) => {
    if (failed) return;
    failed = true;
    upstream.destroy();
    if (res.headersSent) res.destroy();
    else options.onError(err);
  };
  upstream.on("error", fail);
  if (options.timeoutMs !== undefined) {
    upstream.setTimeout(options.timeoutMs, () => fail(new Error(`upstream did not answer within ${options.timeoutMs} ms`)));
  }
  upstream.on("response", (answer) => {
    // A response that started is streamed: from here a timeout would cut a stream.
    upstream.setTimeout(0);
    const rawOut = answer.rawHeaders;
    const out: string[] = [];
    let eventStream = false;
    for (let i = 0; i < rawOut.length; i += 2) {
      const lower = rawOut[i]!.toLowerCase();
      if (HOP_BY_HOP.has(lower)) {
        // The upstream refused the rest of a body (e.g. 413 on its Content-Length): close the
        // client connection too instead of reading a body nobody will use.
        if (lower === "connection" && !req.complete && /close/i.test(rawOut[i + 1]!)) out.push("Connection", "close");
        continue;
      }
      if (lower === "content-type" && rawOut[i + 1]!.startsWith("text/event-stream")) eventStream = true;
      out.push(rawOut[i]!, rawOut[i + 1]!);
    }
    res.writeHead(answer.statusCode ?? 502, answer.statusMessage, out);
    // Event streams: status line and headers now, not with the first event.
    if (eventStream) res.flushHeaders();
    answer.pipe(res);
    answer.on("error", () => res.destroy());
    // An upstream that dies mid-response (crash, kill, restart) cuts the client's response too,
    // as nginx does; otherwise a stream client waits forever instead of reconnecting.
    answer.once("close", () => {
      if (!answer.complete) res.destroy();
    });
  });
  // The client went away before the answer ended: stop the upstream request too.
  res.on("close", () => {
    if (!res.writableFinished) upstream.destroy();
  });
  req.pipe(upstream);
}
