import { describe, expect, it } from "vitest";
import { OverloadedError, UpstreamUnavailableError } from "@tog/core";
import { createOrchestratorClient, startOrchestratorServer } from "@tog/proto";
import { captureLogs, fakeOrchestrator, freePort, sleep, startHarness } from "./helpers.ts";

const silent = () => captureLogs("silent").logger;

describe("unreachable orchestrator", () => {
  it("fails fast with UpstreamUnavailableError, well before the deadline", async () => {
    const client = createOrchestratorClient({
      address: `127.0.0.1:${await freePort()}`,
      deadlineMs: 3_000,
      logger: silent(),
    });
    try {
      const started = Date.now();
      const err = await client.ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamUnavailableError);
      expect((err as Error).message).toBe("Orchestrator unavailable");
      expect(Date.now() - started).toBeLessThan(1_500);
    } finally {
      client.close();
    }
  });

  it("a closed client rejects with UpstreamUnavailableError", async () => {
    const h = await startHarness();
    h.fake.behaviour.ping = async () => {};
    await h.client.ping();
    h.client.close();
    const err = await h.client.ping().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(UpstreamUnavailableError);
    await h.close();
  });
});

describe("deadlines", () => {
  it("a slow implementation → 'did not answer in time' at the deadline; the server survives the cancelled call", async () => {
    const h = await startHarness({ deadlineMs: 150 });
    try {
      let finished = false;
      h.fake.behaviour.getTask = async () => {
        await sleep(700);
        finished = true;
        throw new Error("late failure after the caller gave up");
      };
      h.fake.behaviour.ping = async () => {};
      const started = Date.now();
      const err = await h.client.getTask("u", "t").catch((e: unknown) => e);
      const elapsed = Date.now() - started;
      expect(err).toBeInstanceOf(OverloadedError);
      expect((err as Error).message).toBe("Orchestrator did not answer in time");
      expect(elapsed).toBeGreaterThanOrEqual(140);
      expect(elapsed).toBeLessThan(650);
      // The handler completes after the cancellation without crashing the server...
      for (let i = 0; i < 100 && !finished; i++) await sleep(20);
      expect(finished).toBe(true);
      // ...which keeps serving.
      await expect(h.client.ping()).resolves.toBeUndefined();
      expect(h.serverLogs.lines.some((l) => l.msg === "call cancelled or past its deadline before the answer")).toBe(
        true,
      );
    } finally {
      await h.close();
    }
  });

  it("a late success after the deadline is dropped quietly too", async () => {
    const h = await startHarness({ deadlineMs: 100 });
    try {
      h.fake.behaviour.ping = async () => sleep(250);
      await expect(h.client.ping()).rejects.toBeInstanceOf(OverloadedError);
      await sleep(250);
      h.fake.behaviour.ping = async () => {};
      await expect(h.client.ping()).resolves.toBeUndefined();
    } finally {
      await h.close();
    }
  });
});

describe("server shutdown", () => {
  it("tryShutdown lets the call in flight finish, then refuses new calls", async () => {
    const fake = fakeOrchestrator();
    const server = await startOrchestratorServer({ impl: fake.impl, host: "127.0.0.1", port: 0, logger: silent() });
    const client = createOrchestratorClient({
      address: `127.0.0.1:${server.port}`,
      deadlineMs: 2_000,
      logger: silent(),
    });
    try {
      fake.behaviour.ping = async () => sleep(200);
      const inFlight = client.ping();
      await sleep(50);
      const stopped = server.tryShutdown();
      await expect(inFlight).resolves.toBeUndefined();
      await expect(stopped).resolves.toBeUndefined();
      const err = await client.ping().catch((e: unknown) => e);
      expect(err).toBeInstanceOf(UpstreamUnavailableError);
      expect((err as Error).message).toBe("Orchestrator unavailable");
    } finally {
      client.close();
      server.forceShutdown();
    }
  });

  it("forceShutdown ends the calls in flight with 'Orchestrator unavailable' instead of leaving them hanging", async () => {
    const fake = fakeOrchestrator();
    const server = await startOrchestratorServer({ impl: fake.impl, host: "127.0.0.1", port: 0, logger: silent() });
    const client = createOrchestratorClient({
      address: `127.0.0.1:${server.port}`,
      deadlineMs: 5_000,
      logger: silent(),
    });
    try {
      fake.behaviour.ping = async () => sleep(300);
      const started = Date.now();
      const inFlight = client.ping().catch((e: unknown) => e);
      await sleep(50);
      server.forceShutdown();
      const err = await inFlight;
      expect(err).toBeInstanceOf(UpstreamUnavailableError);
      expect((err as Error).message).toBe("Orchestrator unavailable");
      expect(Date.now() - started).toBeLessThan(1_000);
      // The implementation still finishes in the background without crashing anything.
      await sleep(300);
    } finally {
      client.close();
    }
  });

  it("shutdown(grace) waits for short calls and cuts longer ones at the grace period", async () => {
    const fake = fakeOrchestrator();
    const server = await startOrchestratorServer({ impl: fake.impl, host: "127.0.0.1", port: 0, logger: silent() });
    const client = createOrchestratorClient({
      address: `127.0.0.1:${server.port}`,
      deadlineMs: 5_000,
      logger: silent(),
    });
    try {
      fake.behaviour.ping = async () => sleep(100);
      fake.behaviour.getTask = async () => {
        await sleep(2_000);
        throw new Error("never answered");
      };
      const short = client.ping();
      const long = client.getTask("u", "t").catch((e: unknown) => e);
      await sleep(30);
      const started = Date.now();
      await server.shutdown(300);
      expect(Date.now() - started).toBeLessThan(1_000);
      await expect(short).resolves.toBeUndefined();
      expect(await long).toBeInstanceOf(UpstreamUnavailableError);
    } finally {
      client.close();
    }
  });

  it("binding an address in use rejects", async () => {
    const fake = fakeOrchestrator();
    const first = await startOrchestratorServer({ impl: fake.impl, host: "127.0.0.1", port: 0, logger: silent() });
    try {
      await expect(
        startOrchestratorServer({ impl: fake.impl, host: "127.0.0.1", port: first.port, logger: silent() }),
      ).rejects.toThrow();
    } finally {
      first.forceShutdown();
    }
  });
});
