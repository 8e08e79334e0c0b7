// @tog/sdk in headless Chromium, loaded as plain ES modules (types stripped, no bundler, no
// polyfills): proves its browser path uses no Node-only code. A page from another origin than
// the API (CORS in play) submits a task, follows it over SSE while the stream service is killed
// and restarted (the SDK resumes: one gap-free sequence), over WebSocket, lists tasks and hits
// a typed error. Authentication off: a browser WebSocket cannot set the key header. Also the
// interactive API docs (/api/v1/docs) as a browser renders them.
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import http from "node:http";
import { stripTypeScriptTypes } from "node:module";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext } from "playwright-core";
import type { RunningService } from "@tog/devstack";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

const CHROMIUM = "/usr/bin/chromium";
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);

const REPO = path.resolve(import.meta.dirname, "../..");
const SDK_SRC = path.join(REPO, "libs/sdk/src");
const PARSER = path.join(REPO, "node_modules/eventsource-parser/dist");

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>sdk</title>
<script type="importmap">{ "imports": { "eventsource-parser": "/vendor/eventsource-parser/index.js" } }</script>
<script type="module">
  import { TogClient, NotFoundError } from "/sdk/index.ts";
  const api = new URLSearchParams(location.search).get("api");
  const tog = new TogClient({ baseUrl: api });
  const out = (window.out = { errors: [] });
  try {
    const sub = await tog.tasks.submit({ query: "Write a long paragraph about browsers", mode: "simple" });
    out.taskId = sub.task_id;
    out.sessionHeader = sub.session_id;
    out.sse = [];
    out.reconnects = [];
    for await (const e of tog.stream(sub.task_id, { idleTimeoutMs: 3000, backoff: { initialMs: 100, maxMs: 1000 }, onReconnect: (i) => out.reconnects.push(i.reason) })) {
      out.sse.push(e.seq);
      out.lastType = e.type;
      if (out.sse.length === 3) await window.restartStreamService();
    }
    out.ws = [];
    for await (const e of tog.stream(sub.task_id, { transport: "ws" })) out.ws.push(e.seq);
    out.filtered = [];
    for await (const e of tog.stream(sub.task_id, { types: ["WORKFLOW_COMPLETED"] })) out.filtered.push(e.type);
    out.detail = await tog.tasks.get(sub.task_id);
    await tog.tasks.submit({ query: "A second task, so listing has two pages", mode: "simple" });
    out.listed = [];
    for await (const t of tog.tasks.list({ pageSize: 1, limit: 2 })) out.listed.push(t.task_id);
    try {
      await tog.tasks.get("7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d");
    } catch (err) {
      out.notFound = { typed: err instanceof NotFoundError, status: err.status, message: err.message };
    }
    const ctrl = new AbortController();
    ctrl.abort();
    out.aborted = await tog.tasks.get(sub.task_id, { signal: ctrl.signal }).then(() => "resolved", (e) => e.name);
  } catch (err) {
    out.errors.push(String(err && err.stack || err));
  }
  out.done = true;
</script>`;

let env: E2eEnvironment;
let site: http.Server;
let siteUrl: string;
let context: BrowserContext;
let profile: string;
let streamInstance: RunningService | undefined;

function serve(req: http.IncomingMessage, res: http.ServerResponse): void {
  const url = new URL(req.url ?? "/", "http://x");
  const send = (type: string, body: string) => {
    res.writeHead(200, { "Content-Type": `${type}; charset=utf-8` });
    res.end(body);
  };
  try {
    if (url.pathname === "/") {
      send("text/html", PAGE);
      return;
    }
    if (url.pathname.startsWith("/sdk/")) {
      const file = path.join(SDK_SRC, path.normalize(url.pathname.slice("/sdk/".length)));
      if (!file.startsWith(SDK_SRC)) throw new Error("outside");
      send("text/javascript", stripTypeScriptTypes(readFileSync(file, "utf8")));
      return;
    }
    if (url.pathname.startsWith("/vendor/eventsource-parser/")) {
      const file = path.join(PARSER, path.normalize(url.pathname.slice("/vendor/eventsource-parser/".length)));
      if (!file.startsWith(PARSER)) throw new Error("outside");
      send("text/javascript", readFileSync(file, "utf8"));
      return;
    }
  } catch {
    // fall through to 404
  }
  res.writeHead(404).end();
}

beforeAll(async () => {
  if (!available) return;
  env = await startE2eEnvironment({
    allowRouterErrors: true, // the stream service is killed mid-stream
    env: { GATEWAY_SKIP_AUTH: "1" },
    services: {
      worker: { OFFLINE_CHUNK_DELAY_MS: "40" },
      stream: { STREAM_RETRY_MS: "200", STREAM_KEEPALIVE_MS: "1000" },
    },
  });
  site = http.createServer(serve);
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  profile = mkdtempSync(path.join(os.tmpdir(), "tog-sdk-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    // docs.tog.test: the API under a name that is not localhost (Swagger UI treats those apart).
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
      "--host-resolver-rules=MAP docs.tog.test 127.0.0.1",
    ],
  });
}, 120_000);
afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await new Promise((resolve) => (site ? site.close(resolve) : resolve(undefined)));
  await env?.close();
});

describe.skipIf(!available)("@tog/sdk in a browser", () => {
  it("submits, follows a task across a killed stream service (SSE), over WebSocket, lists, and types its errors", async () => {
    const page = await context.newPage();
    const consoleErrors: string[] = [];
    page.on("pageerror", (e) => consoleErrors.push(e.message));
    await page.exposeFunction("restartStreamService", async () => {
      const instance = streamInstance ?? env.service("stream");
      const port = Number(new URL(instance.url).port);
      await instance.kill();
      await new Promise((r) => setTimeout(r, 300));
      streamInstance = await env.stack.startInstance("stream", {
        port,
        env: { STREAM_RETRY_MS: "200", STREAM_KEEPALIVE_MS: "1000" },
      });
    });
    await page.goto(`${siteUrl}?api=${encodeURIComponent(env.baseUrl)}`);
    await page.waitForFunction(() => (globalThis as any).out?.done === true, undefined, {
      timeout: 90_000,
      polling: 200,
    });
    const out = (await page.evaluate(() => (globalThis as any).out)) as Record<string, any>;
    await page.close();
    expect(consoleErrors).toEqual([]);
    expect(out.errors).toEqual([]);

    const history = await request<{ events: { seq: number; type: string }[] }>(
      `${env.baseUrl}/tasks/${out.taskId}/events?limit=200`,
    );
    const n = history.body.events.length;
    const all = Array.from({ length: n }, (_, i) => i + 1);
    expect(out.reconnects.length, "the SDK reconnected in the browser").toBeGreaterThanOrEqual(1);
    expect(out.sse).toEqual(all);
    expect(out.lastType).toBe("WORKFLOW_COMPLETED");
    expect(out.ws).toEqual(all);
    expect(out.filtered).toEqual(["WORKFLOW_COMPLETED"]);
    expect(out.sessionHeader).toMatch(/^[0-9a-f-]{36}$/); // X-Session-ID readable cross-origin
    expect(out.detail.status).toBe("TASK_STATUS_COMPLETED");
    expect(out.listed).toHaveLength(2);
    expect(out.notFound).toEqual({ typed: true, status: 404, message: "Task not found" });
    expect(out.aborted).toBe("AbortError");
  });

  it("renders the interactive API docs at /api/v1/docs: every operation, only the gateway's own files", async () => {
    const page = await context.newPage();
    const errors: string[] = [];
    const requested: string[] = [];
    page.on("pageerror", (e) => errors.push(e.message));
    page.on("console", (m) => {
      if (m.type() === "error") errors.push(m.text());
    });
    page.on("request", (r) => requested.push(r.url()));
    const origin = `http://docs.tog.test:${new URL(env.baseUrl).port}`;
    await page.goto(`${origin}/api/v1/docs`);
    const doc = (
      await request<{ info: { title: string }; paths: Record<string, Record<string, unknown>> }>(
        `${env.baseUrl}/openapi.json`,
      )
    ).body;
    const operations = Object.values(doc.paths).flatMap((ops) =>
      Object.keys(ops).filter((m) => ["get", "post", "put", "patch", "delete"].includes(m)),
    ).length;
    await page.waitForFunction(
      (n) => (globalThis as any).document.querySelectorAll(".opblock").length >= n,
      operations,
      { timeout: 30_000, polling: 200 },
    );
    expect(await page.locator(".opblock").count()).toBe(operations);
    expect(await page.locator(".info .title").first().textContent()).toContain(doc.info.title);
    await page.waitForLoadState("networkidle");
    await page.close();
    expect(
      requested.filter((u) => !u.startsWith(`${origin}/`) && !u.startsWith("data:")),
      "no CDN, no third party",
    ).toEqual([]);
    expect(requested).toEqual(
      expect.arrayContaining([`${origin}/api/v1/openapi.json`, `${origin}/api/v1/docs/swagger-ui-bundle.js`]),
    );
    expect(errors).toEqual([]);
  });
});
