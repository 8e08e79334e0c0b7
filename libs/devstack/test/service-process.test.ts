// test-tier: e2e (startService runs each entry as its own process)
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import http from "node:http";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import {
  canConnect,
  freePort,
  startNginxRouter,
  startService,
  ServiceStartError,
  type RunningService,
} from "../src/index.ts";

const ENTRY = path.join(import.meta.dirname, "fixtures/upstream.ts");
const started: RunningService[] = [];
afterAll(async () => {
  await Promise.all(started.map((s) => s.kill()));
});

describe("startService", () => {
  it("runs the entry as its own process, waits for readiness and captures JSON log lines", async () => {
    const port = await freePort();
    const svc = await startService({
      name: "up",
      entry: ENTRY,
      port,
      readyPath: "/health",
      env: { PORT: String(port), UPSTREAM_NAME: "one" },
    });
    started.push(svc);
    expect(svc.pid).not.toBe(process.pid);
    expect(svc.isRunning).toBe(true);
    const res = await fetch(`${svc.url}/x`);
    expect(await res.json()).toMatchObject({ name: "one", url: "/x" });
    const line = await svc.waitForLog((l) => l.msg === "request" && l.path === "/x");
    expect(line).toMatchObject({ service: "one" });
    expect(svc.logs().some((l) => l.msg === "listening" && l.port === port)).toBe(true);
    const exit = await svc.stop();
    expect(exit).toEqual({ code: 0, signal: null });
    expect(svc.isRunning).toBe(false);
    expect(svc.logs().some((l) => l.msg === "sigterm")).toBe(true);
  });

  it("a service started with NODE_COMPILE_CACHE fills that cache for the next start", async () => {
    const cache = mkdtempSync(path.join(tmpdir(), "tog-compile-cache-"));
    try {
      const port = await freePort();
      const svc = await startService({
        name: "cached",
        entry: ENTRY,
        port,
        readyPath: "/health",
        env: { PORT: String(port), NODE_COMPILE_CACHE: cache },
      });
      started.push(svc);
      expect(await svc.stop()).toEqual({ code: 0, signal: null });
      const files = readdirSync(cache, { recursive: true, withFileTypes: true }).filter((e) => e.isFile());
      expect(files.length).toBeGreaterThan(0);
    } finally {
      rmSync(cache, { recursive: true, force: true });
    }
  });

  it("says on stderr when a started service dies on its own, with its last output; not when stopped", async () => {
    const start = async (name: string) => {
      const port = await freePort();
      return startService({ name, entry: ENTRY, port, readyPath: "/health", env: { PORT: String(port) } });
    };
    const written: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((chunk) => {
      written.push(String(chunk));
      return true;
    });
    try {
      const dying = await start("dying");
      const stopped = await start("stopped");
      process.kill(dying.pid, "SIGKILL");
      await dying.exited;
      await stopped.stop();
      await new Promise((r) => setImmediate(r));
      const said = written.join("");
      expect(said).toContain(`[devstack] dying (pid ${dying.pid}) exited unexpectedly (code null, signal SIGKILL)`);
      expect(said).toMatch(/"msg":"listening"/);
      expect(said).not.toContain("stopped (pid");
    } finally {
      spy.mockRestore();
    }
  });

  it("does not pass the parent's environment through", async () => {
    process.env.DEVSTACK_LEAK_CHECK = "leaked";
    const probe = path.join(import.meta.dirname, "fixtures/env-probe.ts");
    const svc = await startService({ name: "probe", entry: probe, env: { SEEN: "yes" } });
    started.push(svc);
    const exit = await svc.exited;
    delete process.env.DEVSTACK_LEAK_CHECK;
    expect(exit.code).toBe(0);
    const out = svc.logs()[0];
    expect(out).toMatchObject({ SEEN: "yes" });
    expect(out).not.toHaveProperty("DEVSTACK_LEAK_CHECK");
  });

  it("fails fast with the captured output when the process exits during start-up", async () => {
    const port = await freePort();
    const started_ = Date.now();
    const err = await startService({
      name: "crash",
      entry: ENTRY,
      port,
      readyPath: "/health",
      env: { PORT: String(port), CRASH_ON_START: "1" },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ServiceStartError);
    expect((err as Error).message).toContain("boom: cannot start");
    expect((err as Error).message).toContain("code 3");
    expect(Date.now() - started_).toBeLessThan(5_000);
  });

  it("is not ready while another process holds its port, even when that process answers the probe", async () => {
    // Parallel test files race for free ports: the stream service of one e2e run once found its
    // port taken by another run's gateway, whose /health answered, and was counted ready.
    const squatter = http.createServer((_req, res) => res.writeHead(200).end("{}"));
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      const err = await startService({
        name: "late",
        entry: ENTRY,
        port,
        readyPath: "/health",
        env: { PORT: String(port) },
      }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(ServiceStartError);
      expect((err as Error).message).toContain("EADDRINUSE");
    } finally {
      squatter.close();
    }
  });

  it("escalates to SIGKILL when SIGTERM is ignored", async () => {
    const port = await freePort();
    const svc = await startService({
      name: "stubborn",
      entry: ENTRY,
      port,
      readyPath: "/health",
      env: { PORT: String(port), IGNORE_SIGTERM: "1" },
    });
    started.push(svc);
    const exit = await svc.stop(300);
    expect(exit.signal).toBe("SIGKILL");
  });

  it("a child shuts down when its parent dies without stopping it (even by SIGKILL)", async () => {
    const parent = await startService({ name: "parent", entry: path.join(import.meta.dirname, "fixtures/parent.ts") });
    started.push(parent);
    const { childPid } = (await parent.waitForLog((l) => typeof l.childPid === "number", 20_000)) as {
      childPid: number;
    };
    expect(alive(childPid)).toBe(true);
    await parent.kill();
    await expect.poll(() => alive(childPid), { timeout: 10_000, interval: 100 }).toBe(false);
  });

  it("nginx on the public port stops when its parent dies without stopping it (even by SIGKILL)", async () => {
    const parent = await startService({
      name: "nginx-parent",
      entry: path.join(import.meta.dirname, "fixtures/nginx-parent.ts"),
    });
    started.push(parent);
    const { port, pids, prefix } = (await parent.waitForLog((l) => Array.isArray(l.pids), 20_000)) as {
      port: number;
      pids: number[];
      prefix: string;
    };
    // the supervisor, nginx's master and its worker
    expect(pids.length).toBeGreaterThanOrEqual(3);
    expect(await canConnect(port)).toBe(true);
    await parent.kill();
    await expect.poll(() => pids.filter(alive), { timeout: 15_000, interval: 100 }).toEqual([]);
    expect(await canConnect(port)).toBe(false);
    expect(existsSync(prefix), "its prefix directory is removed").toBe(false);
  });

  it("nginx is not counted as started while another process holds its port", async () => {
    const squatter = http.createServer((_req, res) => res.writeHead(200).end("{}"));
    await new Promise<void>((resolve) => squatter.listen(0, "127.0.0.1", resolve));
    const port = (squatter.address() as AddressInfo).port;
    try {
      const err = await startNginxRouter({ port, host: "127.0.0.1", routes: [] }).catch((e: unknown) => e);
      expect((err as Error).message).toMatch(/Address already in use/);
    } finally {
      squatter.close();
    }
  });

  it("rejects a missing entry file", async () => {
    await expect(startService({ name: "nope", entry: "/does/not/exist.ts" })).rejects.toThrow(/does not exist/);
  });
});

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
