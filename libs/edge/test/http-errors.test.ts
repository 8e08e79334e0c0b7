import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig, NotFoundError, RateLimitedError, ValidationError } from "@tog/core";
import { edgeConfigShape } from "../src/index.ts";
import { captureLogs, startTestApp, type TestApp } from "./edge-harness.ts";

let app: TestApp;
const logs = captureLogs();

beforeAll(async () => {
  app = await startTestApp({
    logger: logs.logger,
    maxBodyBytes: 1024,
    routes: (r) => {
      r.post("/echo", (req, res) => void res.json({ got: req.body as unknown }));
      r.get("/throws", () => {
        throw new Error("connect ECONNREFUSED 10.0.0.7:5432 password=hunter2");
      });
      r.get("/rejects", async () => {
        await Promise.resolve();
        throw new TypeError("Cannot read properties of undefined (reading 'secret')");
      });
      r.get("/validation", () => {
        throw new ValidationError("Query is required");
      });
      r.get("/missing", () => {
        throw new NotFoundError("Task not found");
      });
      r.get("/limited", () => {
        throw new RateLimitedError(7);
      });
    },
  });
});

afterAll(() => app.close());

const postRaw = (body: string, contentType = "application/json") =>
  fetch(`${app.url}/echo`, { method: "POST", headers: { "content-type": contentType }, body });

describe("error responses", () => {
  it("accepts a valid JSON body", async () => {
    const res = await postRaw('{"query":"hi"}');
    expect(res.status).toBe(200);
    expect(await res.json()).toEqual({ got: { query: "hi" } });
  });

  it("answers malformed JSON with 400 Invalid request body: <detail>", async () => {
    for (const body of ['{"query":', "not json", '"a string"']) {
      const res = await postRaw(body);
      expect(res.status).toBe(400);
      expect(res.headers.get("content-type")).toMatch(/^application\/json/);
      const json = (await res.json()) as { error: string };
      expect(Object.keys(json)).toEqual(["error"]);
      expect(json.error).toMatch(/^Invalid request body: .+/);
    }
  });

  it("answers an oversized body with 413 Request body too large", async () => {
    const res = await postRaw(JSON.stringify({ query: "x".repeat(2_000) }));
    expect(res.status).toBe(413);
    expect(await res.json()).toEqual({ error: "Request body too large" });
    const atLimit = await postRaw(JSON.stringify({ query: "x".repeat(1_024 - 14) }));
    expect(atLimit.status).toBe(200);
  });

  it("answers an unknown route with a JSON 404", async () => {
    const res = await fetch(`${app.url}/no/such/route`);
    expect(res.status).toBe(404);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(await res.json()).toEqual({ error: "Not found" });
  });

  it("hides internals of unexpected errors behind 500 Internal server error, and logs them", async () => {
    for (const path of ["/throws", "/rejects"]) {
      const res = await fetch(`${app.url}${path}`);
      expect(res.status).toBe(500);
      const text = await res.text();
      expect(JSON.parse(text)).toEqual({ error: "Internal server error" });
      expect(text).not.toMatch(/hunter2|ECONNREFUSED|secret|at .*\.ts/);
    }
    expect(logs.lines.some((l) => l.level === "error" && JSON.stringify(l.err).includes("ECONNREFUSED"))).toBe(true);
  });

  it("maps named errors to their status and message", async () => {
    const v = await fetch(`${app.url}/validation`);
    expect(v.status).toBe(400);
    expect(await v.json()).toEqual({ error: "Query is required" });
    const n = await fetch(`${app.url}/missing`);
    expect(n.status).toBe(404);
    expect(await n.json()).toEqual({ error: "Task not found" });
    const l = await fetch(`${app.url}/limited`);
    expect(l.status).toBe(429);
    expect(await l.json()).toEqual({ error: "Rate limit exceeded", retry_after: 7 });
    expect(l.headers.get("retry-after")).toBe("7");
    expect(l.headers.get("x-ratelimit-remaining")).toBe("0");
  });
});

describe("edgeConfigShape", () => {
  it("has the documented defaults", () => {
    expect(loadConfig(edgeConfigShape, {})).toEqual({
      RATE_LIMIT_RPM: 60,
      RATE_LIMIT_BURST: 20,
      RATE_LIMIT_LEASE_MAX: 64,
      CORS_ALLOWED_ORIGINS: [],
      MAX_BODY_BYTES: 1_048_576,
      IDEMPOTENCY_TTL_SECONDS: 86_400,
    });
  });

  it("parses values and describes every variable", () => {
    const c = loadConfig(edgeConfigShape, {
      RATE_LIMIT_RPM: "100",
      RATE_LIMIT_BURST: "5",
      CORS_ALLOWED_ORIGINS: "https://a.example, https://b.example,",
      MAX_BODY_BYTES: "2048",
      IDEMPOTENCY_TTL_SECONDS: "60",
    });
    expect(c.CORS_ALLOWED_ORIGINS).toEqual(["https://a.example", "https://b.example"]);
    expect(c.RATE_LIMIT_RPM).toBe(100);
    expect(() => loadConfig(edgeConfigShape, { RATE_LIMIT_RPM: "0" })).toThrow(/RATE_LIMIT_RPM/);
    for (const schema of Object.values(edgeConfigShape)) expect(schema.description).toBeTruthy();
  });
});
