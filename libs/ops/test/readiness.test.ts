import type { AddressInfo } from "node:net";
import type { Server } from "node:http";
import express from "express";
import { afterAll, describe, expect, it } from "vitest";
import { createLogger } from "@tog/core";
import { pingCheck, readinessHandler, runReadiness, type ReadinessCheck } from "../src/index.ts";

const logger = createLogger({ service: "readiness-test", level: "silent" });
const ok = (name: string): ReadinessCheck => ({ name, check: () => Promise.resolve() });
const failing = (name: string, message = "connect ECONNREFUSED 10.0.0.7:5432"): ReadinessCheck => ({
  name,
  check: () => Promise.reject(new Error(message)),
});
const hanging = (name: string): ReadinessCheck => ({ name, check: () => new Promise(() => undefined) });

describe("runReadiness", () => {
  it("is ready when every check answers, naming each", async () => {
    expect(await runReadiness([ok("postgres"), ok("redis")], 500)).toEqual({
      ready: true,
      checks: { postgres: "ok", redis: "ok" },
      failed: [],
      errors: {},
    });
  });

  it("names a failed and a timed-out check apart, keeping the errors for the log only", async () => {
    const report = await runReadiness([ok("postgres"), failing("redis"), hanging("nats")], 100);
    expect(report.ready).toBe(false);
    expect(report.checks).toEqual({ postgres: "ok", redis: "unavailable", nats: "timed out after 100 ms" });
    expect(report.failed).toEqual(["redis", "nats"]);
    expect((report.errors.redis as Error).message).toContain("10.0.0.7");
  });

  it("passes the deadline to each check and counts a throwing check as failed", async () => {
    const seen: number[] = [];
    const throwing: ReadinessCheck = {
      name: "sync",
      check: () => {
        throw new Error("not a promise");
      },
    };
    const report = await runReadiness([{ name: "peer", check: (ms) => Promise.resolve(seen.push(ms)) }, throwing], 250);
    expect(seen).toEqual([250]);
    expect(report.checks).toEqual({ peer: "ok", sync: "unavailable" });
  });

  it("pingCheck asks a peer's ping", async () => {
    let pinged = 0;
    const report = await runReadiness([pingCheck("orchestrator", { ping: async () => void pinged++ })], 500);
    expect(pinged).toBe(1);
    expect(report.checks).toEqual({ orchestrator: "ok" });
  });
});

describe("readinessHandler", () => {
  const servers: Server[] = [];
  afterAll(() => Promise.all(servers.map((s) => new Promise((r) => s.close(r)))));

  async function serve(checks: ReadinessCheck[]): Promise<string> {
    const app = express();
    app.get("/readiness", readinessHandler({ checks, timeoutMs: 200, logger }));
    const server = await new Promise<Server>((resolve) => {
      const s = app.listen(0, "127.0.0.1", () => resolve(s));
    });
    servers.push(server);
    return `http://127.0.0.1:${(server.address() as AddressInfo).port}/readiness`;
  }

  it("answers 200 ready, never cached", async () => {
    const res = await fetch(await serve([ok("postgres")]));
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("no-store");
    expect(await res.json()).toEqual({ status: "ready", checks: { postgres: "ok" } });
  });

  it("answers 503 naming what is not ready, without the error's host or port", async () => {
    const res = await fetch(await serve([ok("postgres"), failing("redis")]));
    expect(res.status).toBe(503);
    const text = await res.text();
    expect(JSON.parse(text)).toEqual({
      status: "not ready",
      error: "Not ready: redis",
      checks: { postgres: "ok", redis: "unavailable" },
    });
    expect(text).not.toContain("10.0.0.7");
  });
});
