import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError } from "@tog/core";
import {
  EVENT_PERSISTER_INACTIVE_MS,
  ensureConsumers,
  ensureStreams,
  eventPersisterConsumer,
  eventsStream,
  runWorkersConsumer,
  runsStream,
  systemTopology,
  type Bus,
  type StreamDefinition,
} from "@tog/bus";
import { deleteStreamsOf, earlierPersisterConsumer, openTestBus } from "./helpers.ts";

const SECOND_NS = 1_000_000_000;

describe("ensureStreams / ensureConsumers", () => {
  let bus: Bus;
  const extra: Bus[] = [];
  beforeAll(async () => {
    bus = await openTestBus("busprov");
  });
  afterAll(async () => {
    await deleteStreamsOf(bus);
    await Promise.all([bus, ...extra].map((b) => b.close()));
  });

  it("creates the system streams with the declared config, then reports unchanged", async () => {
    const topology = systemTopology({ prefix: bus.prefix, eventsMaxAgeSeconds: 3_600 });
    const first = await ensureStreams(bus, topology.streams);
    expect(first.map((r) => [r.name, r.action])).toEqual([
      [bus.streamName("EVENTS"), "created"],
      [bus.streamName("RUNS"), "created"],
    ]);

    const events = await bus.jsm.streams.info(bus.streamName("EVENTS"));
    expect(events.config).toMatchObject({
      subjects: [`${bus.prefix}.events.>`],
      retention: "limits",
      storage: "file",
      max_age: 3_600 * SECOND_NS,
      duplicate_window: 120 * SECOND_NS,
    });
    const runs = await bus.jsm.streams.info(bus.streamName("RUNS"));
    expect(runs.config).toMatchObject({
      subjects: [`${bus.prefix}.runs.>`],
      retention: "workqueue",
      storage: "file",
      max_age: 0,
      duplicate_window: 120 * SECOND_NS,
      discard: "new",
    });

    const second = await ensureStreams(bus, topology.streams);
    expect(second.map((r) => [r.action, r.changes])).toEqual([
      ["unchanged", []],
      ["unchanged", []],
    ]);
  });

  it("updates max_age when the definition changes", async () => {
    const [result] = await ensureStreams(bus, [eventsStream({ prefix: bus.prefix, eventsMaxAgeSeconds: 1_800 })]);
    expect(result).toMatchObject({ action: "updated", changes: ["max_age"] });
    const info = await bus.jsm.streams.info(bus.streamName("EVENTS"));
    expect(info.config.max_age).toBe(1_800 * SECOND_NS);
    expect(info.config.duplicate_window).toBe(120 * SECOND_NS);
  });

  it("refuses an immutable change with an error naming the stream and the field", async () => {
    const def: StreamDefinition = { ...eventsStream({ prefix: bus.prefix }), retention: "workqueue" };
    const err = await ensureStreams(bus, [def]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toContain(`Stream "${bus.streamName("EVENTS")}"`);
    expect((err as Error).message).toContain(`field "retention"`);
    expect((await bus.jsm.streams.info(bus.streamName("EVENTS"))).config.retention).toBe("limits");
  });

  it("survives 5 concurrent calls from separate connections", async () => {
    const def: StreamDefinition = {
      name: bus.streamName("RACE"),
      subjects: [bus.subject("race", ">")],
      retention: "limits",
      storage: "file",
      maxAgeMs: 60_000,
    };
    for (let i = 0; i < 5; i++) extra.push(await openTestBus("busprov", bus.prefix));
    const results = await Promise.all(extra.map((b) => ensureStreams(b, [def])));
    for (const [r] of results) expect(["created", "unchanged"]).toContain(r!.action);
    const names: string[] = [];
    for await (const n of bus.jsm.streams.names(bus.subject("race", "x"))) names.push(n);
    expect(names).toEqual([def.name]);
    // The window defaults to 2 min but may not exceed max_age.
    expect((await bus.jsm.streams.info(def.name)).config.duplicate_window).toBe(60 * SECOND_NS);

    const consumer = { stream: def.name, durable: "racer", ackWaitMs: 5_000 };
    const consumerResults = await Promise.all(extra.map((b) => ensureConsumers(b, [consumer])));
    for (const [r] of consumerResults) expect(["created", "unchanged"]).toContain(r!.action);
    expect((await bus.jsm.consumers.info(def.name, "racer")).config.ack_wait).toBe(5 * SECOND_NS);
  });

  it("creates, keeps, updates and guards durable consumers", async () => {
    await ensureStreams(bus, [
      runsStream({ prefix: bus.prefix }),
      eventsStream({ prefix: bus.prefix, eventsMaxAgeSeconds: 1_800 }),
    ]);
    const defs = [runWorkersConsumer({ prefix: bus.prefix }), eventPersisterConsumer({ prefix: bus.prefix })];
    expect((await ensureConsumers(bus, defs)).map((r) => [r.stream, r.name, r.action])).toEqual([
      [bus.streamName("RUNS"), "run-workers", "created"],
      [bus.streamName("EVENTS"), "event-persister", "created"],
    ]);
    const workers = await bus.jsm.consumers.info(bus.streamName("RUNS"), "run-workers");
    expect(workers.config).toMatchObject({
      durable_name: "run-workers",
      ack_policy: "explicit",
      deliver_policy: "all",
      filter_subject: `${bus.prefix}.runs.>`,
      ack_wait: 3 * SECOND_NS,
      max_deliver: -1,
      max_ack_pending: 1_000,
    });
    expect(workers.config.deliver_subject).toBeUndefined();
    expect(workers.config.inactive_threshold ?? 0).toBe(0);
    const persister = await bus.jsm.consumers.info(bus.streamName("EVENTS"), "event-persister");
    expect(persister.config).toMatchObject({
      ack_policy: "explicit",
      deliver_policy: "all",
      max_deliver: -1,
      inactive_threshold: EVENT_PERSISTER_INACTIVE_MS * 1_000_000,
    });

    expect((await ensureConsumers(bus, defs)).map((r) => r.action)).toEqual(["unchanged", "unchanged"]);

    const changed = { ...defs[0]!, ackWaitMs: 10_000, maxDeliver: 3 };
    const [updated] = await ensureConsumers(bus, [changed]);
    expect(updated).toMatchObject({ action: "updated", changes: ["ack_wait", "max_deliver"] });
    expect((await bus.jsm.consumers.info(bus.streamName("RUNS"), "run-workers")).config).toMatchObject({
      ack_wait: 10 * SECOND_NS,
      max_deliver: 3,
    });

    const immutable = ensureConsumers(bus, [{ ...changed, ackPolicy: "all" }]);
    await expect(immutable).rejects.toBeInstanceOf(ConfigError);
    await expect(immutable).rejects.toThrow(/Consumer "run-workers" on stream "[A-Z0-9_]+_RUNS": field "ack_policy"/);

    await expect(ensureConsumers(bus, [{ stream: bus.streamName("MISSING"), durable: "x" }])).rejects.toThrow(
      /does not exist/,
    );
  });

  it("gives an existing consumer an inactivity threshold, and takes it away", async () => {
    await ensureStreams(bus, [eventsStream({ prefix: bus.prefix, eventsMaxAgeSeconds: 1_800 })]);
    // As an earlier release provisioned it: no threshold.
    const earlier = earlierPersisterConsumer(bus.prefix, "persister-earlier");
    expect(await ensureConsumers(bus, [earlier], { create: false })).toMatchObject([{ action: "absent" }]);
    await expect(bus.jsm.consumers.info(bus.streamName("EVENTS"), "persister-earlier")).rejects.toThrow();
    await ensureConsumers(bus, [earlier]);
    const info = () => bus.jsm.consumers.info(bus.streamName("EVENTS"), "persister-earlier");
    expect((await info()).config.inactive_threshold ?? 0).toBe(0);

    // What `npm run bus:setup` does for the persister's consumer: converge it only if it exists.
    const current = { ...earlier, inactiveThresholdMs: EVENT_PERSISTER_INACTIVE_MS };
    expect(await ensureConsumers(bus, [current], { create: false })).toMatchObject([
      { action: "updated", changes: ["inactive_threshold"] },
    ]);
    expect((await info()).config.inactive_threshold).toBe(EVENT_PERSISTER_INACTIVE_MS * 1_000_000);
    expect(await ensureConsumers(bus, [current])).toMatchObject([{ action: "unchanged" }]);

    expect(await ensureConsumers(bus, [earlier])).toMatchObject([
      { action: "updated", changes: ["inactive_threshold"] },
    ]);
    expect((await info()).config.inactive_threshold ?? 0).toBe(0);
  });

  it("the server deletes a consumer nobody pulls from once its threshold has passed, not one that is read", async () => {
    await ensureStreams(bus, [eventsStream({ prefix: bus.prefix, eventsMaxAgeSeconds: 1_800 })]);
    const stream = bus.streamName("EVENTS");
    const def = (durable: string) => ({
      ...eventPersisterConsumer({ prefix: bus.prefix }),
      durable,
      inactiveThresholdMs: 3_000,
    });
    await ensureConsumers(bus, [def("unread"), def("read")]);
    // "read" is pulled from the whole time, as a running persister does.
    const messages = await (await bus.js.consumers.get(stream, "read")).consume({ expires: 1_000 });
    const reading = (async () => {
      for await (const m of messages) m.ack();
    })();
    const exists = (durable: string) =>
      bus.jsm.consumers.info(stream, durable).then(
        () => true,
        () => false,
      );
    try {
      await new Promise((r) => setTimeout(r, 5_000));
      expect(await exists("unread")).toBe(false);
      expect(await exists("read")).toBe(true);
    } finally {
      messages.stop();
      await reading;
    }
  });
});
