// The real service process (main.ts) with the page Vite built at install (`npm run generate`):
// it starts, serves the built page whose every script and stylesheet is a same-origin file
// under /console/assets, and refuses a bad setting at start.
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { freePort, REPO_ROOT, startService, type RunningService } from "@tog/devstack";
import { WEB_BUILD_DIR } from "../src/index.ts";

const ENTRY = path.join(REPO_ROOT, "services/console/src/main.ts");
let service: RunningService;

beforeAll(async () => {
  const port = await freePort();
  // Ready well before the hook's own timeout, so a failed start stops its process itself.
  service = await startService({
    name: "console",
    entry: ENTRY,
    cwd: REPO_ROOT,
    port,
    readyPath: "/health",
    readyTimeoutMs: 20_000,
    env: { HOST: "127.0.0.1", PORT: String(port), METRICS_PORT: "0", LOG_LEVEL: "info" },
  });
}, 30_000);
afterAll(async () => {
  await service?.stop(5_000);
});

describe("console service", () => {
  it("serves the built page, whose scripts and styles are same-origin files it also serves", async () => {
    const res = await fetch(`${service.url}/console/`);
    expect(res.status).toBe(200);
    const html = await res.text();
    expect(html).toBe(readFileSync(path.join(WEB_BUILD_DIR, "index.html"), "utf8"));
    // No inline script or style: the page runs under script-src/style-src 'self'.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/<style|\sstyle=/);
    const refs = [...html.matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!).filter((r) => !r.startsWith("data:"));
    expect(refs.length).toBeGreaterThanOrEqual(2);
    for (const ref of refs) {
      expect(ref, "same-origin build file").toMatch(/^\/console\/assets\/[\w.-]+\.(js|css)$/);
      const asset = await fetch(`${service.url}${ref}`);
      expect(asset.status, ref).toBe(200);
      expect(asset.headers.get("cache-control"), ref).toContain("immutable");
    }
  });

  it("logs where it listens and reports its ops port", () => {
    const logs = service.logs();
    expect(logs.some((l) => l.msg === "web console listening" && l.apiBaseUrl === "/api/v1")).toBe(true);
    expect(logs.some((l) => l.msg === "ops port (metrics, health) listening")).toBe(true);
  });

  it("refuses to start with an API base URL that is neither a path nor an http(s) URL", async () => {
    const port = await freePort();
    await expect(
      startService({
        name: "console-bad",
        entry: ENTRY,
        cwd: REPO_ROOT,
        port,
        readyPath: "/health",
        readyTimeoutMs: 10_000,
        env: { HOST: "127.0.0.1", PORT: String(port), METRICS_PORT: "0", CONSOLE_API_BASE_URL: "javascript:alert(1)" },
      }),
    ).rejects.toThrow(/CONSOLE_API_BASE_URL/);
  });
});
