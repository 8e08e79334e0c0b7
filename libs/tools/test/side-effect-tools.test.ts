import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ok, fails, registryFor } from "./helpers.ts";

describe("workspace_write", () => {
  it("describes a set and a delete as {key, value, action} for WORKSPACE_UPDATED", async () => {
    expect(await ok("workspace_write", { key: "report/summary", value: { words: 120, tags: ["a"] } })).toEqual({
      key: "report/summary",
      value: { words: 120, tags: ["a"] },
      action: "set",
    });
    expect(await ok("workspace_write", { key: "draft", action: "delete" })).toEqual({
      key: "draft",
      value: null,
      action: "delete",
    });
  });

  it("refuses bad keys, missing or oversized values", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ key: "../etc", value: 1 }, "key: Use letters, digits"],
      [{ key: "", value: 1 }, "key:"],
      [{ key: "k" }, 'value: Required for action "set"'],
      [{ key: "k", action: "delete", value: 1 }, 'value: Must be absent for action "delete"'],
      [{ key: "k", value: "x".repeat(70_000) }, "value: Too large: 70002 bytes serialized, at most 65536"],
    ];
    for (const [args, message] of cases) {
      const failure = await fails("workspace_write", args);
      expect(failure.errorType).toBe("INVALID_INPUT");
      expect(failure.error.message).toContain(message);
    }
  });
});

describe("http_fetch", () => {
  let server: Server;
  let port: number;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (req.url === "/redirect") {
        res.writeHead(302, { location: "http://example.com/" }).end();
      } else if (req.url === "/big") {
        res.writeHead(200, { "content-type": "text/plain" }).end("x".repeat(10_000));
      } else if (req.url === "/slow") {
        setTimeout(() => res.end("late"), 5_000).unref();
      } else {
        res
          .writeHead(200, { "content-type": "application/json" })
          .end(JSON.stringify({ path: req.url, accept: req.headers.accept }));
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    port = (server.address() as AddressInfo).port;
  });
  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it("refuses every host by default, loopback included", async () => {
    const outcome = await registryFor().invoke("http_fetch", { url: `http://127.0.0.1:${port}/` });
    expect(outcome).toMatchObject({ ok: false, errorType: "TOOL_EXECUTION_FAILED", recoverable: false });
    expect(!outcome.ok && outcome.error.message).toBe(
      `Host "127.0.0.1:${port}" is not on the http_fetch allow-list (allowed: none (every fetch is refused))`,
    );
  });

  it("fetches from an allow-listed host and does not follow redirects off it", async () => {
    const registry = registryFor({ httpFetch: { allowedHosts: [`127.0.0.1:${port}`], maxBytes: 1_000 } });
    expect(registry.get("http_fetch")?.description).toContain(`Allowed hosts: 127.0.0.1:${port}`);
    const outcome = await registry.invoke("http_fetch", {
      url: `http://127.0.0.1:${port}/data?q=1`,
      headers: { accept: "application/json" },
    });
    expect(outcome.ok && outcome.result.data).toEqual({
      url: `http://127.0.0.1:${port}/data?q=1`,
      status: 200,
      content_type: "application/json",
      location: null,
      body: JSON.stringify({ path: "/data?q=1", accept: "application/json" }),
      truncated: false,
    });
    const redirect = await registry.invoke("http_fetch", { url: `http://127.0.0.1:${port}/redirect` });
    expect(redirect.ok && redirect.result.data).toMatchObject({
      status: 302,
      location: "http://example.com/",
      body: "",
    });
    const big = await registry.invoke("http_fetch", { url: `http://127.0.0.1:${port}/big` });
    expect(big.ok && big.result.data).toMatchObject({ status: 200, truncated: true, body: "x".repeat(1_000) });
    const otherPort = await registry.invoke("http_fetch", { url: `http://127.0.0.1:${port + 1}/` });
    expect(otherPort).toMatchObject({ ok: false, errorType: "TOOL_EXECUTION_FAILED" });
    const scheme = await registry.invoke("http_fetch", { url: "file:///etc/passwd" });
    expect(!scheme.ok && scheme.error.message).toBe("url: only http and https are supported, not file:");
  });

  it("is aborted by cancellation mid-request", async () => {
    const registry = registryFor({ httpFetch: { allowedHosts: ["127.0.0.1"] } });
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const started = performance.now();
    const outcome = await registry.invoke(
      "http_fetch",
      { url: `http://127.0.0.1:${port}/slow` },
      { signal: controller.signal },
    );
    expect(performance.now() - started).toBeLessThan(3_000);
    expect(outcome).toMatchObject({ ok: false, errorType: "CANCELLED" });
  });
});
