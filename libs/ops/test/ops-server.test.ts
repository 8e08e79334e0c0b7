import net from "node:net";
import { afterAll, describe, expect, it } from "vitest";
import { createMetrics, startOpsServer, type OpsServer } from "../src/index.ts";

const servers: OpsServer[] = [];
afterAll(() => Promise.all(servers.map((s) => s.close())));

async function start(health?: () => Promise<boolean | void>) {
  const metrics = createMetrics({ service: "ops-test", defaultMetrics: false });
  const server = await startOpsServer({ metrics, port: 0, host: "127.0.0.1", ...(health ? { health } : {}) });
  servers.push(server);
  return { metrics, base: `http://127.0.0.1:${server.port}` };
}

describe("the ops port", () => {
  it("serves the registry's metrics with the service label, and dependency checks at scrape time", async () => {
    const { metrics, base } = await start();
    metrics.counter("tog_test_things_total", "Things.", ["kind"]).inc({ kind: "a" }, 2);
    let up = true;
    metrics.dependency("postgres", () => (up ? Promise.resolve() : Promise.reject(new Error("down"))));
    const first = await (await fetch(`${base}/metrics`)).text();
    expect(first).toContain('tog_test_things_total{kind="a",service="ops-test"} 2');
    expect(first).toContain('tog_dependency_up{dependency="postgres",service="ops-test"} 1');
    up = false;
    expect(await (await fetch(`${base}/metrics`)).text()).toContain(
      'tog_dependency_up{dependency="postgres",service="ops-test"} 0',
    );
  });

  it("answers /health from the liveness check: 200, or 503 when it fails", async () => {
    const healthy = await start();
    expect(await (await fetch(`${healthy.base}/health`)).json()).toEqual({ status: "healthy" });
    const sick = await start(async () => false);
    const res = await fetch(`${sick.base}/health`);
    expect(res.status).toBe(503);
    expect(res.headers.get("cache-control")).toBe("no-store");
    const broken = await start(() => Promise.reject(new Error("nats down")));
    expect((await fetch(`${broken.base}/health`)).status).toBe(503);
  });

  it("answers 404 for anything else", async () => {
    const { base } = await start();
    const res = await fetch(`${base}/`);
    expect(res.status).toBe(404);
    expect(await res.json()).toEqual({ error: "Not found" });
  });
});

/** Raw bytes to the port; the answer's status, lower-cased head and body. */
function raw(port: number, bytes: string): Promise<{ status: number; headers: string; body: string }> {
  return new Promise((resolve) => {
    const socket = net.connect(port, "127.0.0.1");
    const chunks: Buffer[] = [];
    socket.on("data", (c: Buffer) => chunks.push(c));
    socket.on("error", () => undefined);
    socket.on("close", () => {
      const [head = "", body = ""] = Buffer.concat(chunks).toString("latin1").split("\r\n\r\n");
      resolve({ status: Number(head.split(" ")[1]), headers: head.toLowerCase(), body });
    });
    socket.write(bytes);
    setTimeout(() => socket.destroy(), 3_000).unref();
  });
}

// Every error is JSON, Node's parser errors included, like the public ports (docs/security.md, "Bad input").
describe("the ops port's errors", () => {
  it.each([
    ["unknown method", "BREW /health HTTP/1.1\r\nHost: x\r\n\r\n", 400],
    ["malformed request line", "GET /health HTP/1.1\r\n\r\n", 400],
    ["malformed header", "GET /health HTTP/1.1\r\nHost: x\r\nNo Colon\r\n\r\n", 400],
    ["oversized headers", `GET /health HTTP/1.1\r\nHost: x\r\nX-Big: ${"b".repeat(20_000)}\r\n\r\n`, 431],
    ["Expect other than 100-continue", "GET /health HTTP/1.1\r\nHost: x\r\nExpect: 200-ok\r\n\r\n", 417],
    ["unknown path", "GET /nope HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n", 404],
  ] as const)("%s → JSON error", async (_name, bytes, status) => {
    const { base } = await start();
    const res = await raw(Number(new URL(base).port), bytes);
    expect(res.status).toBe(status);
    expect(res.headers).toContain("content-type: application/json");
    expect(res.headers).toContain("x-content-type-options: nosniff");
    expect(JSON.parse(res.body)).toEqual({ error: expect.any(String) });
  });

  it("carries nosniff and no-store on /metrics and /health too", async () => {
    const { base } = await start();
    for (const p of ["/metrics", "/health"]) {
      const res = await fetch(`${base}${p}`);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("x-content-type-options"), p).toBe("nosniff");
      expect(res.headers.get("cache-control"), p).toBe("no-store");
    }
  });
});
