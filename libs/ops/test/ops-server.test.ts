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
    expect(await (await fetch(`${base}/metrics`)).text()).toContain('tog_dependency_up{dependency="postgres",service="ops-test"} 0');
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
