import { randomUUID } from "node:crypto";
import { createLogger, OverloadedError } from "@tog/core";
import { deleteStreamsOf, openTestBus, provisionTestBus } from "@tog/testkit";
import type { Bus } from "@tog/bus";
import { afterEach, describe, expect, it } from "vitest";
import { QueueBreaker } from "../../src/tasks/queue-breaker.ts";
import { RunQueue } from "../../src/tasks/run-queue.ts";

// The run queue against the real NATS (docs/reliability.md "NATS"): while NATS answers but the
// RUNS stream does not (a cluster electing the stream's new leader after losing a server), a
// submit's publish is repeated within the deadline instead of refused; while NATS itself does not
// answer, the submit is refused at once and the breaker opens.

const logger = createLogger({ service: "run-queue-test", level: "silent" });
const buses: Bus[] = [];
afterEach(async () => {
  for (const bus of buses.splice(0)) {
    await deleteStreamsOf(bus).catch(() => undefined);
    await bus.close();
  }
});

describe("RunQueue", () => {
  it("repeats the publish while the stream is away but NATS answers, and stores the run once", async () => {
    const bus = await openTestBus("runq");
    buses.push(bus);
    await provisionTestBus(bus);
    const name = bus.streamName("RUNS");
    const config = (await bus.jsm.streams.info(name)).config;
    await bus.jsm.streams.delete(name);
    const breaker = new QueueBreaker({ logger, ping: (t) => bus.ping(t) });
    const queue = new RunQueue({ bus, breaker });
    const taskId = randomUUID();
    const started = Date.now();
    // The stream comes back 1.5 s later, as a new leader would.
    const back = new Promise((r) => setTimeout(r, 1_500)).then(() => bus.jsm.streams.add(config));
    await queue.enqueue(taskId);
    await back;
    expect(Date.now() - started).toBeGreaterThanOrEqual(1_400);
    expect(Date.now() - started).toBeLessThan(4_000);
    expect(breaker.open).toBe(false);
    const info = await bus.jsm.streams.info(name);
    expect(info.state.messages).toBe(1);
  });

  it("gives up within its budget when the stream stays away: 503, breaker still closed (NATS answers)", async () => {
    const bus = await openTestBus("runq");
    buses.push(bus);
    const breaker = new QueueBreaker({ logger, ping: (t) => bus.ping(t) });
    const queue = new RunQueue({ bus, breaker });
    const started = Date.now();
    await expect(queue.enqueue(randomUUID())).rejects.toThrow("Task queue unavailable");
    expect(Date.now() - started).toBeLessThan(4_500);
    // The other submits keep trying: the stream may be back for them.
    expect(breaker.open).toBe(false);
  });

  it("refuses at once and opens the breaker when NATS itself does not answer", async () => {
    const bus = await openTestBus("runq");
    buses.push(bus);
    await provisionTestBus(bus);
    // Pings that fail stand for a paused or stopped server.
    const ping = async () => Promise.reject(new Error("away"));
    const breaker = new QueueBreaker({ logger, ping });
    const away: Bus = { ...bus, ping };
    await bus.jsm.streams.delete(bus.streamName("RUNS"));
    const queue = new RunQueue({ bus: away, breaker });
    const started = Date.now();
    await expect(queue.enqueue(randomUUID())).rejects.toThrow("Task queue unavailable");
    expect(Date.now() - started).toBeLessThan(1_500);
    expect(breaker.open).toBe(true);
    expect(() => queue.assertAccepting()).toThrow(OverloadedError);
  });
});
