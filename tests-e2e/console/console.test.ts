// The web console in headless Chromium against the real system (every service its own process
// behind the router, auth on, workers on the offline provider): sign in with an API key, submit
// and watch a task live to COMPLETED, approve and deny, cancel, resume a stream the server
// dropped without gaps, filter and page the task list, and a session page (rename, delete).
// Each page is saved as a screenshot under .tmp/console-screenshots/ and checked for errors.
import { existsSync, mkdirSync, mkdtempSync, rmSync } from "node:fs";
import os from "node:os";
import path from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { chromium, type BrowserContext, type Page } from "playwright-core";
import { REPO_ROOT } from "@tog/devstack";
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

const CHROMIUM = "/usr/bin/chromium";
// CI installs Chromium (.ci/run); elsewhere the test runs when it is there.
const available = existsSync(CHROMIUM);
if (!available && process.env.CI) throw new Error(`${CHROMIUM} is missing: .ci/run installs Debian's chromium package`);

const SHOTS = path.join(REPO_ROOT, ".tmp", "console-screenshots");
// A long query makes a long offline reply (it echoes the query), streamed chunk by chunk.
const LONG_QUERY = `Write a long essay about the history of computing. ${"Cover every decade, every machine and every person in detail. ".repeat(30)}`;

type Json = Record<string, any>;

let env: E2eEnvironment;
let apiKey: string;
let consoleUrl: string;
let context: BrowserContext;
let profile: string;
let page: Page;
/** Console messages of type error and uncaught page errors, per page. */
let problems: string[] = [];
/** Tolerated console errors (e.g. the 401 of a refused sign-in), as patterns. */
let tolerated: RegExp[] = [];
const requested: string[] = [];

const api = <T = Json>(p: string, init: RequestInit = {}) =>
  request<T>(`${env.baseUrl}${p}`, {
    ...init,
    headers: { "X-API-Key": apiKey, "Content-Type": "application/json", ...(init.headers as Record<string, string>) },
  });

/** expect.poll with room for a busy machine (each check may itself wait for an element). */
const poll = <T>(fn: () => Promise<T> | T, message?: string, timeout = 20_000) =>
  expect.poll(fn, { timeout, interval: 100, message });

async function newPage(): Promise<Page> {
  const p = await context.newPage();
  p.on("console", (msg) => {
    if (msg.type() === "error" && !tolerated.some((t) => t.test(msg.text()))) problems.push(`console: ${msg.text()}`);
  });
  p.on("pageerror", (err) => problems.push(`page error: ${err.message}`));
  p.on("request", (r) => requested.push(r.url()));
  return p;
}

/**
 * A full-page screenshot, after checking that the page shows what it should, is styled, does not
 * overflow sideways, has no broken image and logged no error; then the saved image itself is
 * checked (decoded in a blank page of the same browser): the viewport's width and real content,
 * not a blank or single-colour frame.
 */
async function shot(name: string, mustSee: string[]): Promise<void> {
  for (const testId of mustSee)
    await poll(() => page.getByTestId(testId).first().isVisible(), `${name}: ${testId} visible`).toBe(true);
  // Pico's stylesheet is applied (the page is not unstyled HTML): body uses its font stack.
  // Page functions run in the browser, where globalThis is the window.
  const layout = await page.evaluate(() => {
    const w = globalThis as any;
    return {
      font: w.getComputedStyle(w.document.body).fontFamily as string,
      overflow: (w.document.documentElement.scrollWidth as number) - (w.innerWidth as number),
      brokenImages: [...w.document.images]
        .filter((img: any) => img.complete && img.naturalWidth === 0)
        .map((img: any) => img.src as string),
    };
  });
  expect(layout.font, `${name}: styled`).toMatch(/system-ui|Segoe|Roboto/);
  expect(layout.overflow, `${name}: no horizontal overflow`).toBeLessThanOrEqual(0);
  expect(layout.brokenImages, `${name}: no broken image`).toEqual([]);
  const png = await page.screenshot({ path: path.join(SHOTS, `${name}.png`), fullPage: true });
  const pixels = await imageStats(png);
  expect(pixels.width, `${name}: screenshot width`).toBe(1280);
  expect(pixels.height, `${name}: screenshot height`).toBeGreaterThanOrEqual(900);
  expect(pixels.colours, `${name}: screenshot has text and controls, not a flat frame`).toBeGreaterThanOrEqual(16);
  expect(pixels.inkShare, `${name}: screenshot is not blank`).toBeGreaterThan(0.005);
  expect(problems, `${name}: no console or page errors`).toEqual([]);
}

/**
 * Size, distinct colours and share of pixels unlike the dominant (background) colour of a PNG,
 * decoded by the page's own browser from bytes (createImageBitmap: no URL, so no CSP question,
 * and no second tab, which would put this one in the background and pause its frames).
 */
async function imageStats(png: Buffer): Promise<{ width: number; height: number; colours: number; inkShare: number }> {
  return page.evaluate(async (b64) => {
    const w = globalThis as any;
    const bytes = Uint8Array.from(w.atob(b64) as string, (c: string) => c.charCodeAt(0));
    const bitmap = await w.createImageBitmap(new w.Blob([bytes], { type: "image/png" }));
    const canvas = new w.OffscreenCanvas(bitmap.width, bitmap.height);
    const ctx = canvas.getContext("2d", { willReadFrequently: true });
    ctx.drawImage(bitmap, 0, 0);
    const data = ctx.getImageData(0, 0, bitmap.width, bitmap.height).data as Uint8ClampedArray;
    const counts = new Map<number, number>();
    let sampled = 0;
    for (let i = 0; i < data.length; i += 4 * 3) {
      const key = (data[i]! << 16) | (data[i + 1]! << 8) | data[i + 2]!;
      counts.set(key, (counts.get(key) ?? 0) + 1);
      sampled++;
    }
    const dominant = Math.max(...counts.values());
    return {
      width: bitmap.width as number,
      height: bitmap.height as number,
      colours: counts.size,
      inkShare: (sampled - dominant) / sampled,
    };
  }, png.toString("base64"));
}

/** Submits through the form and waits for the task page; returns the task id. */
async function submitViaForm(input: {
  query: string;
  mode?: string;
  session?: string;
  context?: Json;
}): Promise<string> {
  await page.goto(`${consoleUrl}/`);
  await page.getByTestId("submit-query").fill(input.query);
  if (input.mode) await page.getByTestId("submit-mode").selectOption(input.mode);
  if (input.session) await page.getByTestId("submit-session").fill(input.session);
  if (input.context) await page.getByTestId("submit-context").fill(JSON.stringify(input.context));
  await page.getByTestId("submit").click();
  await page.waitForURL(/\/console\/tasks\/[0-9a-f-]{36}$/);
  return page.url().split("/").at(-1)!;
}

async function streamCounters(): Promise<{ state: string; received: number; lastSeq: number }> {
  const el = page.getByTestId("stream-state");
  return {
    state: (await el.getAttribute("class")) ?? "",
    received: Number(await el.getAttribute("data-received")),
    lastSeq: Number(await el.getAttribute("data-last-seq")),
  };
}

/** The task's whole persisted history (pages of 200 by seq cursor). */
async function storedEvents(taskId: string): Promise<Json[]> {
  const all: Json[] = [];
  for (;;) {
    const res = await api<Json>(`/tasks/${taskId}/events?limit=200&after_seq=${all.at(-1)?.seq ?? 0}`);
    expect(res.status).toBe(200);
    const page = res.body.events as Json[];
    all.push(...page);
    if (page.length < 200) return all;
  }
}

async function waitForStatus(name: string, timeout = 45_000): Promise<void> {
  await expect
    .poll(async () => (await page.getByTestId("task-detail").getByTestId("status").textContent())?.trim(), {
      timeout,
      interval: 200,
    })
    .toBe(name);
}

beforeAll(async () => {
  if (!available) return;
  mkdirSync(SHOTS, { recursive: true });
  env = await startE2eEnvironment({
    allowRouterErrors: true, // the stream service is restarted
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: { worker: { OFFLINE_CHUNK_DELAY_MS: "30", APPROVAL_TIMEOUT_SECONDS: "120" } },
  });
  apiKey = (await env.createApiKey({ user: "carol@example.com", createUser: true, name: "console" })).key;
  consoleUrl = `${env.stack.router.url}/console`;
  profile = mkdtempSync(path.join(os.tmpdir(), "tog-chromium-"));
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    viewport: { width: 1280, height: 900 },
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
  page = await newPage();
}, 120_000);

afterEach(() => {
  problems = [];
  tolerated = [];
});

afterAll(async () => {
  await context?.close();
  if (profile) rmSync(profile, { recursive: true, force: true });
  await env?.close();
});

describe.skipIf(!available)("web console", () => {
  it("signs in with an API key kept in session storage, refusing a wrong one", async () => {
    await page.goto(`${consoleUrl}/`);
    await shot("01-sign-in", ["sign-in-form", "api-key"]);
    tolerated = [/status of 401/];
    await page.getByTestId("api-key").fill(`sk_${"0".repeat(64)}`);
    await page.getByTestId("sign-in").click();
    await poll(() => page.getByTestId("sign-in-error").textContent()).toContain("Unauthorized");
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);

    await page.getByTestId("api-key").fill(apiKey);
    await page.getByTestId("sign-in").click();
    await page.getByTestId("task-table").waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("tog.console.apiKey"))).toBe(apiKey);
    expect(await page.evaluate(() => localStorage.length)).toBe(0);
    expect(await context.cookies()).toEqual([]);
    // A reload keeps the tab signed in.
    await page.reload();
    await page.getByTestId("task-table").waitFor();
    await shot("02-tasks-empty", ["task-table", "submit-form", "status-filter"]);
  });

  it("submits a task and follows it live to COMPLETED: tool calls, streamed text, tokens and cost", async () => {
    const taskId = await submitViaForm({
      query: "What is 12*(3+4)?",
      mode: "standard",
      context: { note: "from the console" },
    });
    await page.getByTestId("timeline").waitFor();
    await waitForStatus("COMPLETED");
    await poll(async () => (await streamCounters()).state).toContain("stream-ended");

    const stored = await storedEvents(taskId);
    expect(stored.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
    const counters = await streamCounters();
    expect(counters.received).toBe(stored.length);
    expect(counters.lastSeq).toBe(stored.length);
    const types = await page
      .getByTestId("timeline-event")
      .evaluateAll((els) => els.map((e) => e.getAttribute("data-type")));
    for (const t of ["WORKFLOW_STARTED", "TOOL_INVOKED", "TOOL_OBSERVATION", "LLM_OUTPUT", "WORKFLOW_COMPLETED"])
      expect(types).toContain(t);
    expect(types).not.toContain("LLM_PARTIAL");
    expect(await page.getByTestId("timeline-stream").count()).toBeGreaterThan(0);
    const toolCall = await page.locator('[data-type="TOOL_INVOKED"]').first().textContent();
    expect(toolCall).toContain("Tool call");
    expect(toolCall).toContain("calculator");
    expect(await page.locator('[data-type="TOOL_OBSERVATION"]').first().textContent()).toContain("84");
    const detail = (await api<Json>(`/tasks/${taskId}`)).body;
    expect(await page.getByTestId("result").textContent()).toBe(detail.result);
    expect(await page.getByTestId("usage").textContent()).toContain(
      `${detail.usage.total_tokens.toLocaleString("en-US")} tokens`,
    );
    expect(await page.locator('[data-type="WORKFLOW_COMPLETED"]').textContent()).toMatch(/tokens.*\$/);
    expect(await page.getByTestId("cancel").count(), "no cancel button on a finished task").toBe(0);
    await shot("03-task-completed", ["task-detail", "timeline", "result", "usage"]);
  });

  it("shows Approve/Deny when a task asks for approval; approving lets it complete", async () => {
    const taskId = await submitViaForm({
      query: "Summarize the plan",
      mode: "simple",
      context: { require_approval: true },
    });
    await page.getByTestId("approval").waitFor({ timeout: 30_000 });
    await waitForStatus("RUNNING", 20_000);
    await shot("04-task-approval", ["approval", "approve", "deny", "timeline"]);
    await page.getByTestId("approval-feedback").fill("looks good");
    await page.getByTestId("approve").click();
    // The decision comes back as an APPROVAL_DECISION event, and the panel goes (its short
    // "Approved." note may be gone before anyone reads it).
    await poll(() => page.locator('[data-type="APPROVAL_DECISION"]').count(), "decision in the timeline").toBe(1);
    await poll(() => page.getByTestId("approval").count(), "the panel goes once decided").toBe(0);
    await waitForStatus("COMPLETED");
    const decision = (await storedEvents(taskId)).find((e) => e.type === "APPROVAL_DECISION")!;
    expect(decision.data).toMatchObject({ decision: "approved", comments: "looks good" });
    expect(await page.locator('[data-type="APPROVAL_DECISION"]').textContent()).toContain("Approval approved");
    await shot("05-task-approved", ["task-detail", "result"]);
  });

  it("denying an approval ends the task as FAILED", async () => {
    await submitViaForm({ query: "Delete everything", mode: "simple", context: { require_approval: true } });
    await page.getByTestId("deny").click({ timeout: 30_000 });
    await waitForStatus("FAILED");
    expect(await page.locator('[data-type="ERROR_OCCURRED"]').last().textContent()).toContain("Ended: FAILED");
    await shot("06-task-denied", ["task-detail", "task-error"]);
  });

  it("cancels a running task", async () => {
    const taskId = await submitViaForm({ query: LONG_QUERY, mode: "simple" });
    await page.getByTestId("timeline-stream").waitFor({ timeout: 30_000 });
    await page.getByTestId("cancel").click();
    await page.getByTestId("cancel-note").waitFor();
    await waitForStatus("CANCELLED");
    expect(await page.locator('[data-type="ERROR_OCCURRED"]').last().textContent()).toContain("Ended: CANCELLED");
    expect((await api<Json>(`/tasks/${taskId}`)).body.status).toBe("TASK_STATUS_CANCELLED");
    await shot("07-task-cancelled", ["task-detail", "cancel-note", "timeline"]);
  });

  it("resumes a stream the server dropped (stream service restarted) without a gap or a duplicate", async () => {
    const taskId = await submitViaForm({ query: LONG_QUERY, mode: "simple" });
    await page.getByTestId("timeline-stream").waitFor({ timeout: 30_000 });
    const before = (await streamCounters()).received;
    // Every state the stream badge shows from now on.
    await page.evaluate(() => {
      const w = globalThis as any;
      const badge = w.document.querySelector("[data-testid=stream-state]");
      const states: string[] = [badge.className];
      w.streamStates = states;
      new w.MutationObserver(() => states.push(badge.className)).observe(badge, {
        attributes: true,
        attributeFilter: ["class"],
      });
    });
    // The stream service goes away mid-task and comes back on the same address (a redeploy).
    tolerated = [/status of 502/, /ERR_/];
    const stream = env.service("stream");
    const port = stream.port!;
    await stream.stop(5_000);
    await new Promise((r) => setTimeout(r, 1_000));
    await env.stack.startInstance("stream", { port });
    await waitForStatus("COMPLETED", 60_000);
    await poll(async () => (await streamCounters()).state).toContain("stream-ended");

    const states = (await page.evaluate(() => (globalThis as any).streamStates)) as string[];
    expect(states[0]).toContain("stream-open");
    expect(
      states.some((s) => s.includes("stream-reconnecting")),
      `states: ${states.join(" → ")}`,
    ).toBe(true);
    expect(
      states.filter((s) => s.includes("stream-open")).length,
      "open again after the restart",
    ).toBeGreaterThanOrEqual(2);
    const stored = await storedEvents(taskId);
    const counters = await streamCounters();
    expect(before).toBeGreaterThan(0);
    expect(counters.received).toBeGreaterThan(before);
    expect(counters.received, "every event once").toBe(stored.length);
    expect(counters.lastSeq).toBe(stored.length);
    const seqs = await page
      .locator("[data-testid=timeline] > li")
      .evaluateAll((els) => els.map((e) => Number(e.getAttribute("data-seq"))));
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
    expect(new Set(seqs).size).toBe(seqs.length);
    // The streamed text is the model output, whole: no chunk lost or repeated across the drop.
    const output = stored.find((e) => e.type === "LLM_OUTPUT")!.data.output as string;
    expect((await page.getByTestId("timeline-stream").first().locator("pre").textContent())!.trim()).toBe(
      output.trim(),
    );
  });

  it("filters the task list by status and pages through it", async () => {
    await page.goto(`${consoleUrl}/?limit=2`);
    await poll(() => page.getByTestId("task-row").count()).toBe(2);
    const all = (await api<Json>("/tasks?limit=100")).body.total_count as number;
    expect(all).toBeGreaterThanOrEqual(5);
    await poll(() => page.getByTestId("pager").textContent()).toContain(`1–2 of ${all}`);
    await page.getByTestId("page-next").click();
    await poll(() => page.getByTestId("pager").textContent()).toContain(`3–4 of ${all}`);
    expect(page.url()).toContain("offset=2");

    await page.getByTestId("status-filter").selectOption("COMPLETED");
    const completed = (await api<Json>("/tasks?status=COMPLETED&limit=100")).body.total_count as number;
    await poll(() => page.getByTestId("pager").textContent()).toContain(`of ${completed}`);
    const statuses = await page.getByTestId("task-row").getByTestId("status").allTextContents();
    expect(statuses.length).toBeGreaterThan(0);
    expect(new Set(statuses)).toEqual(new Set(["COMPLETED"]));
    await page.getByTestId("status-filter").selectOption("CANCELLED");
    await poll(() => page.getByTestId("task-row").getByTestId("status").allTextContents()).toEqual(["CANCELLED"]);
    await page.goto(`${consoleUrl}/`);
    await shot("08-tasks-list", ["task-table", "pager"]);
  });

  it("shows a session with its turns, renames it and deletes it", async () => {
    const session = `console-chat-${Date.now()}`;
    const first = await submitViaForm({ query: "Say hello", mode: "simple", session });
    await waitForStatus("COMPLETED");
    const second = await submitViaForm({ query: "Say goodbye", mode: "simple", session });
    await waitForStatus("COMPLETED");
    await page.getByTestId("session-link").click();
    await page.waitForURL(/\/console\/sessions\//);
    await poll(() => page.getByTestId("turn").count()).toBe(2);
    const turnLinks = await page
      .getByTestId("turn")
      .locator("a")
      .evaluateAll((els) => els.map((e) => e.getAttribute("href")));
    expect(turnLinks.sort()).toEqual([`/console/tasks/${first}`, `/console/tasks/${second}`].sort());
    expect(await page.getByTestId("session-title").textContent()).toBe(session);
    await shot("09-session", ["session-detail", "turn", "rename-form"]);

    await page.getByTestId("rename-input").fill("Greetings from the console");
    await page.getByTestId("rename").click();
    await poll(() => page.getByTestId("session-title").textContent()).toBe("Greetings from the console");
    const sessionId = page.url().split("/").at(-1)!;
    expect((await api<Json>(`/sessions/${sessionId}`)).body.title).toBe("Greetings from the console");

    await page.getByTestId("nav-sessions").click();
    await poll(() => page.getByTestId("session-row").allTextContents()).toEqual(
      expect.arrayContaining([expect.stringContaining("Greetings from the console")]),
    );
    await shot("10-sessions", ["session-table"]);

    await page.goto(`${consoleUrl}/sessions/${sessionId}`);
    page.once("dialog", (d) => void d.accept());
    await page.getByTestId("delete-session").click();
    await page.waitForURL(/\/console\/sessions$/);
    expect((await api<Json>(`/sessions/${sessionId}`)).status).toBe(404);
    await poll(() => page.getByTestId("session-table").textContent()).not.toContain("Greetings from the console");
  });

  it("answers an unknown console address with its not-found page", async () => {
    await page.goto(`${consoleUrl}/no/such/page`);
    await shot("11-not-found", ["not-found"]);
  });

  it("never puts the API key in a URL, and signs out", async () => {
    expect(requested.length).toBeGreaterThan(20);
    for (const url of requested) expect(url).not.toContain(apiKey);
    expect(requested.some((u) => u.includes("/api/v1/stream/sse?workflow_id="))).toBe(true);
    await page.goto(`${consoleUrl}/`);
    await page.getByTestId("sign-out").click();
    await page.getByTestId("sign-in-form").waitFor();
    expect(await page.evaluate(() => sessionStorage.length)).toBe(0);
  });
});
