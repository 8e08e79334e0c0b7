import { afterAll, describe, expect, it } from "vitest";
import { spawn, type ChildProcess } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { createServer, connect as tcpConnect } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ConfigError, UpstreamUnavailableError, ValidationError, createLogger, loadConfig } from "@tog/core";
import { busConfigShape, connectBus, ensureStreams, publish, type Bus } from "@tog/bus";
import { openTestBus, silentLogger } from "./helpers.ts";

const NATS_SERVER = "/usr/sbin/nats-server";

describe("busConfigShape", () => {
  it("has the documented defaults and validates the prefix", () => {
    expect(loadConfig(busConfigShape, {})).toEqual({
      NATS_URL: "nats://127.0.0.1:4222",
      NATS_PREFIX: "tog",
      EVENTS_MAX_AGE_SECONDS: 3_600,
      RUN_ACK_WAIT_SECONDS: 3,
      NATS_STREAM_REPLICAS: 1,
      RUNS_MAX_PENDING: 1_000_000,
    });
    expect(loadConfig(busConfigShape, { NATS_PREFIX: "tog-prod_2", EVENTS_MAX_AGE_SECONDS: "60" })).toMatchObject({
      NATS_PREFIX: "tog-prod_2",
      EVENTS_MAX_AGE_SECONDS: 60,
    });
    expect(() => loadConfig(busConfigShape, { NATS_PREFIX: "Tog" })).toThrow(/NATS_PREFIX: must match \[a-z0-9_-\]\+/);
    expect(() => loadConfig(busConfigShape, { NATS_PREFIX: "tog.x" })).toThrow(ConfigError);
    expect(() => loadConfig(busConfigShape, { EVENTS_MAX_AGE_SECONDS: "0" })).toThrow(/EVENTS_MAX_AGE_SECONDS/);
    for (const schema of Object.values(busConfigShape)) expect(schema.description).toBeTruthy();
  });
});

describe("connectBus", () => {
  it("builds subjects and stream names from the prefix, pings, and closes cleanly", async () => {
    const bus = await openTestBus("busconn", "tog_conn");
    expect(bus.prefix).toBe("tog_conn");
    expect(bus.subject("events", "wf-1")).toBe("tog_conn.events.wf-1");
    expect(bus.subject("runs", ">")).toBe("tog_conn.runs.>");
    expect(bus.streamName("events")).toBe("TOG_CONN_EVENTS");
    expect(() => bus.subject("events", "a.b")).toThrow(ValidationError);
    expect(() => bus.subject("events", "")).toThrow(ValidationError);
    expect(() => bus.subject("events", "a b")).toThrow(ValidationError);
    expect(() => bus.streamName("A.B")).toThrow(ConfigError);

    const rtt = await bus.ping(1_000);
    expect(rtt).toBeGreaterThanOrEqual(0);

    const sub = bus.nc.subscribe(bus.subject("drain", "x"));
    await bus.close();
    expect(bus.nc.isClosed()).toBe(true);
    // Drain ended the subscription: its iterator finishes instead of waiting forever.
    const received: unknown[] = [];
    for await (const m of sub) received.push(m);
    expect(received).toEqual([]);
    await bus.close(); // idempotent
    await expect(bus.ping()).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });

  it("rejects an invalid prefix and fails fast when NATS is unreachable", async () => {
    await expect(
      connectBus({ url: "nats://127.0.0.1:4222", name: "t", prefix: "Bad.Prefix", logger: silentLogger }),
    ).rejects.toBeInstanceOf(ConfigError);
    const port = await freePort();
    await expect(
      connectBus({ url: `nats://127.0.0.1:${port}`, name: "t", prefix: "t", logger: silentLogger }),
    ).rejects.toBeInstanceOf(UpstreamUnavailableError);
  });
});

describe.skipIf(!existsSync(NATS_SERVER))("reconnect against a private nats-server", () => {
  let server: ChildProcess | undefined;
  let storeDir: string | undefined;
  let bus: Bus | undefined;
  afterAll(async () => {
    await bus?.close();
    await stopServer(server);
    if (storeDir) await rm(storeDir, { recursive: true, force: true });
  });

  it("logs the disconnect, reconnects after the server restarts and resumes publishing", async () => {
    const port = await freePort();
    storeDir = await mkdtemp(join(tmpdir(), "tog-bus-nats-"));
    server = await startServer(port, storeDir);

    const logs: Array<{ msg: string; level: string }> = [];
    const logger = createLogger({
      service: "bus-reconnect-test",
      level: "debug",
      destination: { write: (line: string) => void logs.push(JSON.parse(line)) },
    });
    bus = await connectBus({
      url: `nats://127.0.0.1:${port}`,
      name: "reconnect-test",
      prefix: "recon",
      logger,
      reconnectTimeWaitMs: 100,
      reconnectJitterMs: 100,
    });
    await ensureStreams(bus, [
      { name: bus.streamName("EVENTS"), subjects: [bus.subject("events", ">")], retention: "limits", storage: "file" },
    ]);
    const subject = bus.subject("events", "wf");
    expect((await publish(bus, subject, { n: 1 })).seq).toBe(1);

    await stopServer(server);
    await waitFor(() => logs.some((l) => l.msg === "nats disconnected"), 5_000);
    expect(bus.nc.isClosed()).toBe(false);
    await expect(bus.ping(300)).rejects.toBeInstanceOf(UpstreamUnavailableError);

    server = await startServer(port, storeDir);
    await waitFor(() => logs.some((l) => l.msg === "nats reconnected"), 10_000);
    // JetStream needs a moment after a restart to recover its streams.
    const ack = await retry(() => publish(bus!, subject, { n: 2 }, { timeoutMs: 1_000 }), 10_000);
    expect(ack).toMatchObject({ stream: "RECON_EVENTS", seq: 2, duplicate: false });
    expect(await bus.ping(1_000)).toBeGreaterThanOrEqual(0);
    const disconnect = logs.find((l) => l.msg === "nats disconnected");
    expect(disconnect?.level).toBe("warn");
  });
});

async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      srv.close(() => (typeof address === "object" && address ? resolve(address.port) : reject(new Error("no port"))));
    });
  });
}

async function startServer(port: number, storeDir: string): Promise<ChildProcess> {
  const child = spawn(NATS_SERVER, ["-a", "127.0.0.1", "-p", String(port), "-js", "-sd", storeDir], {
    stdio: "ignore",
  });
  await waitFor(() => canConnect(port), 10_000);
  return child;
}

async function stopServer(child: ChildProcess | undefined): Promise<void> {
  if (!child || child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once("exit", resolve));
  child.kill("SIGKILL");
  await exited;
}

function canConnect(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = tcpConnect(port, "127.0.0.1");
    socket.once("connect", () => {
      socket.destroy();
      resolve(true);
    });
    socket.once("error", () => resolve(false));
  });
}

async function waitFor(check: () => boolean | Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

async function retry<T>(fn: () => Promise<T>, timeoutMs: number): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    try {
      return await fn();
    } catch (err) {
      if (Date.now() > deadline) throw err;
      await new Promise((r) => setTimeout(r, 200));
    }
  }
}
