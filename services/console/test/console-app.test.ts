// The console's HTTP app in process, over a stand-in page build: what is served where, with
// which caching and security headers, and what is not served.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createLogger } from "@tog/core";
import { startHttpServer, type StartedServer } from "@tog/edge";
import { createConsoleApp, loadConsoleConfig } from "../src/index.ts";

const INDEX =
  '<!doctype html><title>console</title><script type="module" src="/console/assets/app-1a2b.js"></script><div id="app"></div>';

let dir: string;
let server: StartedServer;
let base: string;

async function startWith(apiBaseUrl: string): Promise<{ server: StartedServer; base: string }> {
  const app = createConsoleApp({
    logger: createLogger({ service: "console-test", level: "silent" }),
    webDir: dir,
    apiBaseUrl,
    version: "9.9.9",
  });
  const s = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  return { server: s, base: `http://127.0.0.1:${s.port}` };
}

beforeAll(async () => {
  dir = mkdtempSync(path.join(tmpdir(), "tog-console-"));
  mkdirSync(path.join(dir, "assets"));
  writeFileSync(path.join(dir, "index.html"), INDEX);
  writeFileSync(path.join(dir, "assets", "app-1a2b.js"), "console.log('app');\n");
  writeFileSync(path.join(dir, "assets", "app-1a2b.css"), "body{}\n");
  ({ server, base } = await startWith("/api/v1"));
});
afterAll(async () => {
  await server?.close();
  if (dir) rmSync(dir, { recursive: true, force: true });
});

const get = (p: string, init?: RequestInit) => fetch(`${base}${p}`, { redirect: "manual", ...init });

describe("console app", () => {
  it("answers its liveness probe at the root and under /console", async () => {
    for (const p of ["/health", "/console/health"]) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(await res.json()).toMatchObject({ status: "healthy", version: "9.9.9" });
    }
  });

  it("redirects /console to /console/ and keeps the query", async () => {
    const res = await get("/console?x=1");
    expect(res.status).toBe(308);
    expect(res.headers.get("location")).toBe("/console/?x=1");
  });

  it("serves the page for every client-side route under /console, always revalidated", async () => {
    for (const p of ["/console/", "/console/tasks/3f2c", "/console/sessions/abc?offset=10"]) {
      const res = await get(p);
      expect(res.status, p).toBe(200);
      expect(res.headers.get("content-type"), p).toMatch(/^text\/html/);
      expect(res.headers.get("cache-control"), p).toBe("no-cache");
      expect(await res.text()).toBe(INDEX);
    }
  });

  it("serves a strict Content-Security-Policy and no-framing, no-referrer headers with the page", async () => {
    const res = await get("/console/");
    const csp = res.headers.get("content-security-policy") ?? "";
    expect(csp).toContain("default-src 'self'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain("unsafe-inline");
    expect(res.headers.get("x-frame-options")).toBe("DENY");
    expect(res.headers.get("referrer-policy")).toBe("no-referrer");
    expect(res.headers.get("x-content-type-options")).toBe("nosniff");
  });

  it("serves hashed build files as immutable, and a missing one as a JSON 404 (never the page)", async () => {
    const js = await get("/console/assets/app-1a2b.js");
    expect(js.status).toBe(200);
    expect(js.headers.get("content-type")).toMatch(/javascript/);
    expect(js.headers.get("cache-control")).toContain("immutable");
    const missing = await get("/console/assets/app-0000.js");
    expect(missing.status).toBe(404);
    expect(await missing.json()).toEqual({ error: "Not found" });
  });

  it("answers an unsatisfiable Range with a JSON 416, typed as JSON (not as the page it refused)", async () => {
    for (const p of ["/console/", "/console/tasks/x", "/console/assets/app-1a2b.js"]) {
      const res = await get(p, { headers: { Range: "bytes=999999999-" } });
      expect(res.status, p).toBe(416);
      expect(res.headers.get("content-type"), p).toMatch(/^application\/json/);
      expect(await res.json()).toEqual({ error: expect.any(String) });
    }
  });

  it("tells the page where the API is (config.json, never cached)", async () => {
    const res = await get("/console/config.json");
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ api_base_url: "/api/v1" });
  });

  it("serves nothing outside /console, and no other method than GET/HEAD", async () => {
    for (const p of ["/", "/consolex", "/api/v1/tasks", "/index.html"]) {
      const res = await get(p);
      expect(res.status, p).toBe(404);
      expect(await res.json()).toEqual({ error: "Not found" });
    }
    const post = await get("/console/", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: "{}",
    });
    expect(post.status).toBe(404);
    expect(await post.json()).toEqual({ error: "Not found" });
    const traversal = await get("/console/..%2f..%2fetc%2fpasswd");
    expect(await traversal.text()).not.toContain("root:");
  });

  it("allows an API on another origin in the policy's connect-src when configured so", async () => {
    const other = await startWith(
      loadConsoleConfig({ CONSOLE_API_BASE_URL: "https://api.example.com/api/v1/" }).CONSOLE_API_BASE_URL,
    );
    try {
      const res = await fetch(`${other.base}/console/`);
      expect(res.headers.get("content-security-policy")).toContain("connect-src 'self' https://api.example.com");
      expect(await (await fetch(`${other.base}/console/config.json`)).json()).toEqual({
        api_base_url: "https://api.example.com/api/v1",
      });
    } finally {
      await other.server.close();
    }
  });
});
