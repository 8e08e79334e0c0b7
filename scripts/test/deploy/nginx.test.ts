import { createServer, request, type IncomingMessage, type Server } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { readFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort } from "@tog/devstack";
import { ROUTING_TABLE } from "./manifests.ts";
import { nginxUpstreams, NGINX_CONF, startNginx, type RunningNginx } from "./nginx.ts";
import { findNginx, gate, run } from "./tools.ts";

// The compose edge (deploy/nginx/nginx.conf) run by a real nginx in front of stand-in
// upstreams that report who answered: the routing of the Ingress, unbuffered streams,
// WebSocket upgrades, and API-shaped errors of its own.

const nginx = findNginx();
const tool = gate("nginx", nginx);

interface Upstream {
  name: string;
  server: Server;
  port: number;
  /** Every connection, upgraded ones included (server.close waits for those). */
  sockets: Set<Socket>;
}

const SSE_GAP_MS = 1_500;

/** Answers with who it is and what it got; `?slow=1` streams one event, waits, then sends a second. */
async function startUpstream(name: string): Promise<Upstream> {
  const server = createServer((req, res) => {
    if (req.url?.endsWith("slow=1")) {
      // Deliberately without X-Accel-Buffering: the edge itself must not buffer.
      res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache" });
      res.write("data: first\n\n");
      setTimeout(() => res.end("data: second\n\n"), SSE_GAP_MS);
      return;
    }
    res.setHeader("Content-Type", "application/json");
    res.end(
      JSON.stringify({
        service: name,
        url: req.url,
        host: req.headers.host,
        forwardedFor: req.headers["x-forwarded-for"],
      }),
    );
  });
  server.on("upgrade", (req, socket) => {
    socket.write(
      `HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nX-Service: ${name}\r\n\r\n`,
    );
    socket.on("data", (d) => socket.write(d));
  });
  const sockets = new Set<Socket>();
  server.on("connection", (socket) => {
    sockets.add(socket);
    socket.once("close", () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { name, server, port: (server.address() as AddressInfo).port, sockets };
}

function get(
  port: number,
  path: string,
  headers: Record<string, string> = {},
): Promise<{ status: number; headers: IncomingMessage["headers"]; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: "127.0.0.1", port, path, headers: { Host: "api.example.test", ...headers } }, (res) => {
      let body = "";
      res.setEncoding("utf8");
      res.on("data", (c: string) => (body += c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

describe("compose edge configuration", () => {
  // Buffering shows only under load or with a slow client, so the stream location's settings
  // are checked as written, beside the end-to-end test below.
  it("turns buffering off and allows hour-long reads for streams only", () => {
    const conf = readFileSync(NGINX_CONF, "utf8").replace(/#.*$/gm, "");
    const block = (selector: string) => {
      const start = conf.indexOf(`location ${selector} {`);
      expect(start, `location ${selector}`).toBeGreaterThan(0);
      return conf.slice(start, conf.indexOf("}", start));
    };
    const stream = block("~ ^/api/v1/stream(/|$)");
    for (const d of [
      "proxy_buffering off;",
      "proxy_request_buffering off;",
      "proxy_read_timeout 3600s;",
      "proxy_send_timeout 3600s;",
      "proxy_set_header Upgrade $http_upgrade;",
      "proxy_set_header Connection $connection_upgrade;",
    ]) {
      expect(stream, d).toContain(d);
    }
    for (const other of ["~ ^/api/v1/sessions(/|$)", "/api/v1/", "~ ^/console(/|$)"])
      expect(block(other)).not.toContain("proxy_buffering off");
  });
});

describe.skipIf(tool.skip)("compose edge (deploy/nginx/nginx.conf)", () => {
  let upstreams: Upstream[] = [];
  let edge: RunningNginx;

  beforeAll(async () => {
    const bin = tool.require();
    const names = nginxUpstreams(readFileSync(NGINX_CONF, "utf8")).map((u) => u.host);
    upstreams = await Promise.all(names.map(startUpstream));
    edge = await startNginx(bin, {
      listenPort: await freePort(),
      upstreams: Object.fromEntries(upstreams.map((u) => [u.name, u.port])),
    });
  });

  afterAll(async () => {
    await edge?.stop();
    for (const u of upstreams) {
      for (const socket of u.sockets) socket.destroy();
      await new Promise((r) => u.server.close(r));
    }
  });

  it("passes nginx -t", () => {
    const r = run(nginx!, [
      "-t",
      "-c",
      NGINX_CONF,
      "-p",
      "/tmp",
      "-e",
      "stderr",
      "-g",
      "pid /tmp/tog-nginx-t.pid; error_log stderr;",
    ]);
    expect(r.stderr).toContain("test is successful");
    expect(r.status).toBe(0);
  });

  it("proxies to the gateway, stream, session and console services only", () => {
    expect(upstreams.map((u) => u.name).sort()).toEqual(["console", "gateway", "session", "stream"]);
  });

  it("routes every path like the Ingress", async () => {
    for (const { path, service } of ROUTING_TABLE) {
      const res = await get(edge.port, path);
      if (service === undefined) {
        expect(res.status, path).toBe(404);
        expect(JSON.parse(res.body), path).toEqual({ error: "Not found" });
      } else {
        expect(res.status, path).toBe(200);
        const seen = JSON.parse(res.body) as { service: string; url: string };
        expect(seen.service, path).toBe(service);
        expect(seen.url, `${path}: passed on unchanged`).toBe(path);
      }
    }
  });

  it("passes the query string, the Host and the client address on", async () => {
    const res = await get(edge.port, "/api/v1/tasks?limit=5&offset=10");
    const seen = JSON.parse(res.body) as { url: string; host: string; forwardedFor: string };
    expect(seen.url).toBe("/api/v1/tasks?limit=5&offset=10");
    expect(seen.host).toBe("api.example.test");
    expect(seen.forwardedFor).toBe("127.0.0.1");
  });

  it("streams server-sent events without buffering them", async () => {
    const started = Date.now();
    const firstChunkAfter = await new Promise<number>((resolve, reject) => {
      const req = request(
        { host: "127.0.0.1", port: edge.port, path: "/api/v1/stream/sse?workflow_id=w1&slow=1" },
        (res) => {
          expect(res.headers["content-type"]).toBe("text/event-stream");
          res.once("data", () => {
            resolve(Date.now() - started);
            res.destroy();
          });
        },
      );
      req.on("error", reject);
      req.end();
    });
    expect(firstChunkAfter, "the first event arrives before the upstream's response ends").toBeLessThan(
      SSE_GAP_MS - 500,
    );
  });

  it("upgrades WebSocket connections to the stream service", async () => {
    const { service, echoed } = await new Promise<{ service: string | undefined; echoed: string }>(
      (resolve, reject) => {
        const req = request({
          host: "127.0.0.1",
          port: edge.port,
          path: "/api/v1/stream/ws",
          headers: {
            Connection: "Upgrade",
            Upgrade: "websocket",
            "Sec-WebSocket-Version": "13",
            "Sec-WebSocket-Key": "dGhlIHNhbXBsZSBub25jZQ==",
          },
        });
        req.on("upgrade", (res, socket) => {
          socket.once("data", (d: Buffer) => {
            resolve({ service: res.headers["x-service"] as string | undefined, echoed: d.toString() });
            socket.destroy();
          });
          socket.write("ping");
        });
        req.on("response", (res) => reject(new Error(`no upgrade: ${res.statusCode}`)));
        req.on("error", reject);
        req.end();
      },
    );
    expect(service).toBe("stream");
    expect(echoed).toBe("ping");
  });

  it("refuses a body far beyond the services' limit in the API's error shape", async () => {
    const res = await new Promise<{ status: number; body: string }>((resolve, reject) => {
      const req = request(
        {
          host: "127.0.0.1",
          port: edge.port,
          path: "/api/v1/tasks",
          method: "POST",
          headers: { "Content-Type": "application/json", "Content-Length": 3 * 1024 * 1024 },
        },
        (r) => {
          let body = "";
          r.setEncoding("utf8");
          r.on("data", (c: string) => (body += c));
          r.on("end", () => resolve({ status: r.statusCode ?? 0, body }));
        },
      );
      req.on("error", reject);
      req.end("x".repeat(3 * 1024 * 1024));
    });
    expect(res.status).toBe(413);
    expect(JSON.parse(res.body)).toEqual({ error: "Request body too large" });
  });

  it("answers like the dev router when an upstream is down: 502 in the API's error shape", async () => {
    const dead = await freePort();
    const down = await startNginx(nginx!, {
      listenPort: await freePort(),
      upstreams: { gateway: dead, stream: dead, session: dead, console: dead },
    });
    try {
      const res = await get(down.port, "/api/v1/tasks");
      expect(res.status).toBe(502);
      expect(res.headers["content-type"]).toBe("application/json");
      expect(JSON.parse(res.body)).toEqual({ error: "Upstream unavailable" });
    } finally {
      await down.stop();
    }
  });
});
