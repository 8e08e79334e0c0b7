import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { UnauthorizedError } from "@tog/core";
import { createRedis, type Redis } from "@tog/redis";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import { createRateLimiter, type CorsSettings } from "../src/index.ts";
import { dropPrefix, startTestApp, testPrincipal, testRedis, type TestApp } from "./edge-harness.ts";

const prefix = `${uniqueId("edge_cors")}:`;
let redis: Redis;
let raw: Redis;
const apps: TestApp[] = [];
const requireAuth = () => {
  throw new UnauthorizedError();
};

async function corsApp(cors: CorsSettings) {
  const limits = createRateLimiter({ redis, rpm: 1, burst: 1 });
  const app = await startTestApp({
    cors,
    routes: (r) => {
      r.get("/tasks", testPrincipal, limits.middleware(), (_q, s) => void s.json({ ok: true }));
      r.post("/tasks", requireAuth, (_q, s) => void s.json({ ok: true }));
      r.get("/boom", () => {
        throw new Error("boom");
      });
    },
  });
  apps.push(app);
  return app;
}

const preflight = (app: TestApp, origin: string, path = "/tasks") =>
  fetch(`${app.url}${path}`, {
    method: "OPTIONS",
    headers: {
      origin,
      "access-control-request-method": "POST",
      "access-control-request-headers": "content-type,x-api-key",
    },
  });

let dev: TestApp;
let prod: TestApp;

beforeAll(async () => {
  redis = testRedis(prefix);
  raw = createRedis({ url: testInfraConfig.TEST_REDIS_URL });
  dev = await corsApp({ mode: "development", allowedOrigins: [] });
  prod = await corsApp({
    mode: "production",
    allowedOrigins: ["https://app.example.com", "https://admin.example.com"],
  });
});

afterAll(async () => {
  await Promise.all(apps.map((a) => a.close()));
  await dropPrefix(raw, prefix);
  redis.disconnect();
  raw.disconnect();
});

describe("CORS in development", () => {
  it("sends Access-Control-Allow-Origin: * on success, 404 and error responses", async () => {
    const headers = { origin: "https://anything.example", "x-test-key": uniqueId("k") };
    for (const [path, status] of [
      ["/tasks", 200],
      ["/nope", 404],
      ["/boom", 500],
    ] as const) {
      const res = await fetch(`${dev.url}${path}`, { headers });
      expect(res.status).toBe(status);
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
    }
    const res = await fetch(`${dev.url}/tasks`);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    expect(res.headers.get("access-control-expose-headers")).toContain("X-RateLimit-Remaining");
  });

  it("answers a preflight with 204, the contract's methods and headers, without auth or rate limiting", async () => {
    for (let i = 0; i < 3; i++) {
      const res = await preflight(dev, "https://x.example");
      expect(res.status).toBe(204);
      expect(await res.text()).toBe("");
      expect(res.headers.get("access-control-allow-origin")).toBe("*");
      expect(res.headers.get("access-control-allow-methods")).toBe("GET, POST, PUT, PATCH, DELETE, OPTIONS");
      const allowed = res.headers.get("access-control-allow-headers")!.split(", ");
      for (const h of [
        "Content-Type",
        "Authorization",
        "X-API-Key",
        "Idempotency-Key",
        "traceparent",
        "tracestate",
        "Last-Event-ID",
      ]) {
        expect(allowed).toContain(h);
      }
      expect(res.headers.get("access-control-max-age")).toBe("3600");
      expect(res.headers.get("x-ratelimit-limit")).toBeNull();
    }
  });
});

describe("CORS in production", () => {
  it("answers an allowed origin with itself (never the list) and Vary: Origin", async () => {
    for (const origin of ["https://app.example.com", "https://admin.example.com"]) {
      const res = await fetch(`${prod.url}/tasks`, { headers: { origin, "x-test-key": uniqueId("k") } });
      expect(res.status).toBe(200);
      expect(res.headers.get("access-control-allow-origin")).toBe(origin);
      expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
    }
  });

  it("sends no Access-Control-Allow-Origin for an unknown origin, but still Vary: Origin", async () => {
    const res = await fetch(`${prod.url}/tasks`, {
      headers: { origin: "https://evil.example", "x-test-key": uniqueId("k") },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
    expect(res.headers.get("vary")).toMatch(/\bOrigin\b/);
  });

  it("answers preflights with 204; only an allowed origin gets Allow-Origin", async () => {
    const ok = await preflight(prod, "https://app.example.com");
    expect(ok.status).toBe(204);
    expect(ok.headers.get("access-control-allow-origin")).toBe("https://app.example.com");
    expect(ok.headers.get("access-control-allow-methods")).toBe("GET, POST, PUT, PATCH, DELETE, OPTIONS");
    const unknown = await preflight(prod, "https://evil.example");
    expect(unknown.status).toBe(204);
    expect(unknown.headers.get("access-control-allow-origin")).toBeNull();
  });
});
