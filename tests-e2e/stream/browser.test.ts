// A web page in headless Chromium streams a real task (gateway → orchestrator → worker on the
// offline provider) with the browser's own EventSource and WebSocket, authentication off (a
// browser cannot set the headers; in production a backend or proxy injects them).
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import http from "node:http";
import type { AddressInfo } from "node:net";
import os from "node:os";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext } from "playwright-core";
import { EVENT_TYPES } from "@tog/events";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import { range, type Json } from "./support.ts";

const CHROMIUM = "/usr/bin/chromium";
// scripts/test.sh (CI: .ci/run) installs Chromium; elsewhere the test runs when it is there.
const available = existsSync(CHROMIUM);
if (!available && process.env.CI)
  throw new Error(`${CHROMIUM} is missing: scripts/test.sh installs Debian's chromium package`);

const PAGE = `<!doctype html>
<meta charset="utf-8">
<title>stream</title>
<script>
  const params = new URLSearchParams(location.search);
  const api = params.get("api");
  const taskId = params.get("workflow_id");
  const types = JSON.parse(params.get("types"));
  window.sse = { events: [], closed: false, errors: 0 };
  window.ws = { messages: [], open: false };
  const es = new EventSource(api + "/stream/sse?workflow_id=" + taskId);
  for (const type of types) es.addEventListener(type, (e) => window.sse.events.push({ id: e.lastEventId, data: JSON.parse(e.data) }));
  es.onerror = () => {
    window.sse.errors++;
    if (es.readyState === EventSource.CLOSED) window.sse.closed = true;
  };
  const ws = new WebSocket(api.replace(/^http/, "ws") + "/stream/ws?workflow_id=" + taskId);
  ws.onopen = () => (window.ws.open = true);
  ws.onmessage = (e) => window.ws.messages.push(JSON.parse(e.data));
</script>`;

let env: E2eEnvironment;
let site: http.Server;
let siteUrl: string;
let context: BrowserContext;
let profile: string;

beforeAll(async () => {
  if (!available) return;
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "1" },
    services: { worker: { OFFLINE_CHUNK_DELAY_MS: "20" } },
  });
  // The page comes from another origin than the API, as a web app's would (CORS in play).
  site = http.createServer((_req, res) => {
    res.writeHead(200, { "Content-Type": "text/html; charset=utf-8" });
    res.end(PAGE);
  });
  await new Promise<void>((resolve) => site.listen(0, "127.0.0.1", resolve));
  siteUrl = `http://127.0.0.1:${(site.address() as AddressInfo).port}/`;
  profile = mkdtempSync(path.join(os.tmpdir(), "tog-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: [
      "--headless",
      "--no-sandbox",
      "--disable-gpu",
      "--disable-quic",
      "--no-first-run",
      "--disable-background-networking",
      "--disable-component-update",
      "--disable-sync",
    ],
  });
}, 120_000);
afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await new Promise((resolve) => (site ? site.close(resolve) : resolve(undefined)));
  await env?.close();
});

describe.skipIf(!available)("a browser page", () => {
  it("receives a running task's events through EventSource and WebSocket", async () => {
    const submitted = await request<Json>(`${env.baseUrl}/tasks`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ query: "Write a short paragraph about streams", mode: "simple" }),
    });
    expect(submitted.status).toBe(200);
    const taskId = submitted.body.task_id as string;

    const page = await context.newPage();
    const query = new URLSearchParams({
      api: env.baseUrl,
      workflow_id: taskId,
      types: JSON.stringify(EVENT_TYPES),
    });
    await page.goto(`${siteUrl}?${query.toString()}`);
    // Page functions run in the browser, where globalThis is the window.
    await page.waitForFunction(
      () =>
        (globalThis as any).sse.closed &&
        (globalThis as any).ws.messages.some((m: any) => m.type === "WORKFLOW_COMPLETED"),
      undefined,
      {
        timeout: 45_000,
        polling: 100,
      },
    );
    const sse = (await page.evaluate(() => (globalThis as any).sse)) as {
      events: { id: string; data: Json }[];
      errors: number;
    };
    const wsMessages = (await page.evaluate(() => (globalThis as any).ws.messages)) as Json[];
    await page.close();

    const history = await request<Json>(`${env.baseUrl}/tasks/${taskId}/events?limit=200`);
    const stored = history.body.events as Json[];
    expect(stored.length).toBeGreaterThan(3);
    expect(stored.at(-1)!.type).toBe("WORKFLOW_COMPLETED");

    const seqs = sse.events.map((e) => e.data.seq as number);
    expect(seqs).toEqual(range(1, stored.length));
    expect(sse.events.map((e) => e.id)).toEqual(stored.map((e) => e.stream_id));
    expect(sse.events.map((e) => e.data.type)).toEqual(stored.map((e) => e.type));
    expect(sse.events.at(-1)!.data).toMatchObject({ type: "WORKFLOW_COMPLETED", status: "COMPLETED" });
    expect(sse.events.map((e) => e.data.type)).toContain("LLM_PARTIAL");

    // Server messages are events only (OpenAPI `streamWs`): no acknowledgement, no "done".
    expect(wsMessages.every((m) => typeof m.seq === "number")).toBe(true);
    expect(wsMessages.map((e) => e.seq)).toEqual(range(1, stored.length));
    expect(wsMessages.every((e) => e.workflow_id === taskId)).toBe(true);
    expect(wsMessages.at(-1)).toMatchObject({ type: "WORKFLOW_COMPLETED", seq: stored.length });
  });
});
