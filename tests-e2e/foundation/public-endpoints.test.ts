// Default settings (GATEWAY_SKIP_AUTH unset → auth off): probes, OpenAPI, 404s, the router,
// development CORS, trace context in logs, and the model catalog.
import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayOperations, newTraceparent, request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import { call, missingRouteNote, PROTECTED_CALLS } from "./routes.ts";

let env: E2eEnvironment;
let ops: Set<string>;

beforeAll(async () => {
  env = await startE2eEnvironment({
    // one provider with a key, the others without: the catalog must list models only for it
    services: { "model-catalog": { OPENAI_API_KEY: "sk-e2e-not-a-real-key" } },
  });
  ops = await gatewayOperations(env.baseUrl);
});
afterAll(async () => {
  await env?.close();
});

const UNAUTHORIZED = { error: "Unauthorized" };

describe("health and observability endpoints (no authentication)", () => {
  it("GET /health answers 200 JSON", async () => {
    const res = await request<{ status: string; version: string; time: string }>(`${env.baseUrl}/health`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body.status).toBe("healthy");
    expect(Number.isNaN(Date.parse(res.body.time))).toBe(false);
  });

  it("GET /readiness answers 200 when PostgreSQL, Redis and NATS answer", async () => {
    const res = await request<{ status: string; checks: Record<string, string> }>(`${env.baseUrl}/readiness`);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe("ready");
    for (const result of Object.values(res.body.checks)) expect(result).toBe("ok");
  });

  it("GET /openapi.json is an OpenAPI 3.0 document listing the probes", async () => {
    const res = await request<{ openapi: string; paths: Record<string, unknown> }>(`${env.baseUrl}/openapi.json`);
    expect(res.status).toBe(200);
    expect(res.body.openapi).toMatch(/^3\.0\./);
    expect(ops).toContain("GET /api/v1/health");
    expect(ops).toContain("GET /api/v1/readiness");
    expect(ops).toContain("GET /api/v1/openapi.json");
  });
});

describe("unknown routes", () => {
  it.each([
    ["GET", "/api/v1/no-such-route"],
    ["POST", "/api/v1/no-such-route"],
    ["DELETE", "/api/v1/health/extra"],
  ])("%s %s → 404 JSON", async (method, path) => {
    const res = await request(`${env.baseUrl.replace(/\/api\/v1$/, "")}${path}`, { method });
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual({ error: "Not found" });
  });

  it("a path outside /api/v1 gets a JSON 404 from the router", async () => {
    const res = await request(`${env.stack.router.url}/not-the-api`);
    expect(res.status).toBe(404);
    expect(res.body).toEqual({ error: "Not found" });
  });
});

describe.each(PROTECTED_CALLS)("authentication off by default (GATEWAY_SKIP_AUTH=1): $op", (c) => {
  it("answers without X-API-Key", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const res = await call(env.baseUrl, c);
    expect(res.status, res.text).toBe(c.ok);
  });

  it("a key in the query string is still refused", async () => {
    expect(ops.has(c.op), missingRouteNote(c.op)).toBe(true);
    const key = await env.createApiKey();
    const res = await call(env.baseUrl, c, {}, `?api_key=${key.key}`);
    expect(res.status).toBe(401);
    expect(res.body).toEqual(UNAUTHORIZED);
  });
});

describe("CORS in development", () => {
  const ORIGIN = "http://localhost:5173";

  it("a preflight is answered with *, the contract's methods and headers", async () => {
    const res = await fetch(`${env.baseUrl}/tasks`, {
      method: "OPTIONS",
      headers: {
        Origin: ORIGIN,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "content-type,x-api-key,idempotency-key,traceparent",
      },
    });
    expect([200, 204]).toContain(res.status);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const methods = listOf(res.headers.get("access-control-allow-methods"));
    for (const m of ["GET", "POST", "PUT", "DELETE", "OPTIONS"]) expect(methods).toContain(m);
    const allowed = listOf(res.headers.get("access-control-allow-headers")).map((h) => h.toLowerCase());
    for (const h of ["content-type", "authorization", "x-api-key", "idempotency-key", "traceparent"])
      expect(allowed).toContain(h);
  });

  it("responses carry Access-Control-Allow-Origin: * and expose the rate-limit headers", async () => {
    const res = await fetch(`${env.baseUrl}/health`, { headers: { Origin: ORIGIN } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe("*");
    const exposed = listOf(res.headers.get("access-control-expose-headers")).map((h) => h.toLowerCase());
    for (const h of ["x-ratelimit-limit", "x-ratelimit-remaining", "x-ratelimit-reset", "retry-after"])
      expect(exposed).toContain(h);
  });
});

describe("CORS in production (NODE_ENV=production, CORS_ALLOWED_ORIGINS)", () => {
  const ALLOWED = ["https://app.example.com", "https://admin.example.com"];
  let prodBaseUrl: string;

  beforeAll(async () => {
    const variant = await env.startVariant("gateway", {
      NODE_ENV: "production",
      CORS_ALLOWED_ORIGINS: ALLOWED.join(","),
      GATEWAY_SKIP_AUTH: "0",
      AUTH_TOKEN_SECRET: randomBytes(32).toString("hex"),
    });
    prodBaseUrl = variant.baseUrl;
  });

  it.each(ALLOWED)("preflight from the listed origin %s is answered with that origin", async (origin) => {
    const res = await fetch(`${prodBaseUrl}/tasks`, {
      method: "OPTIONS",
      headers: {
        Origin: origin,
        "Access-Control-Request-Method": "POST",
        "Access-Control-Request-Headers": "x-api-key",
      },
    });
    expect([200, 204]).toContain(res.status);
    expect(res.headers.get("access-control-allow-origin")).toBe(origin);
    expect(listOf(res.headers.get("vary")).map((v) => v.toLowerCase())).toContain("origin");
  });

  it("a simple request from a listed origin gets that origin back", async () => {
    const res = await fetch(`${prodBaseUrl}/health`, { headers: { Origin: ALLOWED[0]! } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBe(ALLOWED[0]);
  });

  it("an unknown origin gets no Access-Control-Allow-Origin (preflight and request)", async () => {
    const origin = "https://evil.example.net";
    const pre = await fetch(`${prodBaseUrl}/tasks`, {
      method: "OPTIONS",
      headers: { Origin: origin, "Access-Control-Request-Method": "POST" },
    });
    expect(pre.headers.get("access-control-allow-origin")).toBeNull();
    const res = await fetch(`${prodBaseUrl}/health`, { headers: { Origin: origin } });
    expect(res.status).toBe(200);
    expect(res.headers.get("access-control-allow-origin")).toBeNull();
  });
});

describe("trace context", () => {
  it("the trace id of an incoming traceparent is the trace_id of the gateway's log lines", async () => {
    const tp = newTraceparent();
    const res = await fetch(`${env.baseUrl}/health`, { headers: { traceparent: tp.header } });
    expect(res.status).toBe(200);
    const line = await env
      .service("gateway")
      .waitForLog((l) => l.trace_id === tp.traceId && l.path === "/api/v1/health");
    expect(line.status).toBe(200);
    // the request runs in a span of its own, a child of the caller's
    expect(line.span_id).toMatch(/^[0-9a-f]{16}$/);
    expect(line.span_id).not.toBe(tp.parentId);
  });

  it.each([
    ["unknown version", (t: string, p: string) => `ff-${t}-${p}-01`],
    ["all-zero trace id", (_t: string, p: string) => `00-${"0".repeat(32)}-${p}-01`],
    ["short trace id", (t: string, p: string) => `00-${t.slice(1)}-${p}-01`],
    ["upper-case hex", (t: string, p: string) => `00-${t.toUpperCase()}-${p}-01`],
    ["garbage", () => "not-a-traceparent"],
  ])("an invalid traceparent (%s) starts a new trace", async (_label, make) => {
    const tp = newTraceparent();
    // a path of its own, to find this request's log line
    const marker = `/api/v1/trace-probe-${tp.parentId}`;
    const res = await fetch(`${env.baseUrl.replace(/\/api\/v1$/, "")}${marker}`, {
      headers: { traceparent: make(tp.traceId, tp.parentId) },
    });
    expect(res.status).toBe(404);
    const line = await env.service("gateway").waitForLog((l) => l.path === marker);
    expect(line.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(line.trace_id).not.toBe(tp.traceId);
    expect(line.trace_id).not.toBe("0".repeat(32));
  });

  it("requests without a traceparent get distinct trace ids", async () => {
    const a = `/api/v1/trace-probe-a-${Date.now()}`;
    const b = `/api/v1/trace-probe-b-${Date.now()}`;
    const root = env.baseUrl.replace(/\/api\/v1$/, "");
    await fetch(`${root}${a}`);
    await fetch(`${root}${b}`);
    const la = await env.service("gateway").waitForLog((l) => l.path === a);
    const lb = await env.service("gateway").waitForLog((l) => l.path === b);
    expect(la.trace_id).toMatch(/^[0-9a-f]{32}$/);
    expect(la.trace_id).not.toBe(lb.trace_id);
  });
});

interface ModelRecord {
  id: string;
  name: string;
  tier: string;
  context_window: number;
  cost_per_1k_prompt_tokens: number;
  cost_per_1k_completion_tokens: number;
  supports_tools: boolean;
  supports_streaming: boolean;
  available: boolean;
}

describe("model catalog: GET {llm_url}/providers/models", () => {
  const catalog = () => {
    if (!env.catalogUrl) throw new Error("the model catalog service does not run");
    return env.catalogUrl;
  };

  it("lists models by provider; a provider without a configured key has an empty array", async () => {
    const res = await request<Record<string, ModelRecord[]>>(catalog());
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body.openai?.length).toBeGreaterThan(0);
    expect(res.body.anthropic).toEqual([]);
    expect(res.body.google).toEqual([]);
    const all = Object.values(res.body).flat();
    for (const m of all) {
      expect(m).toEqual({
        id: expect.any(String),
        name: m.id,
        tier: expect.stringMatching(/^(small|medium|large)$/),
        context_window: expect.any(Number),
        cost_per_1k_prompt_tokens: expect.any(Number),
        cost_per_1k_completion_tokens: expect.any(Number),
        supports_tools: expect.any(Boolean),
        supports_streaming: expect.any(Boolean),
        available: expect.any(Boolean),
      });
      expect(Number.isInteger(m.context_window)).toBe(true);
    }
    expect(new Set(all.map((m) => m.tier)).size).toBeGreaterThan(1);
  });

  it.each(["small", "medium", "large"])("tier=%s lists only that tier", async (tier) => {
    const all = (await request<Record<string, ModelRecord[]>>(catalog())).body;
    const res = await request<Record<string, ModelRecord[]>>(`${catalog()}?tier=${tier}`);
    expect(res.status).toBe(200);
    expect(Object.keys(res.body).sort()).toEqual(Object.keys(all).sort());
    for (const [provider, models] of Object.entries(res.body)) {
      for (const m of models) expect(m.tier).toBe(tier);
      expect(models).toEqual(all[provider]!.filter((m) => m.tier === tier));
    }
  });

  it("an invalid tier is a 400 with a JSON error", async () => {
    const res = await request<{ error: string }>(`${catalog()}?tier=huge`);
    expect(res.status).toBe(400);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(Object.keys(res.body)).toEqual(["error"]);
    expect(res.body.error).toMatch(/tier/i);
  });

  it("needs no authentication headers", async () => {
    // the catalog answered above without any header; it must also ignore a bogus key
    const res = await request(catalog(), { headers: { "X-API-Key": "sk_bogus" } });
    expect(res.status).toBe(200);
  });
});

function listOf(header: string | null): string[] {
  return (header ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s.length > 0);
}
