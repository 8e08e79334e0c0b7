import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  ensureConsumers,
  ensureStreams,
  publish,
  runWorkersConsumer,
  runsStream,
  systemSubjects,
  type Bus,
} from "@tog/bus";
import type { Consumer } from "@nats-io/jetstream";
import { deleteStreamsOf, openTestBus } from "./helpers.ts";

describe("RUNS work queue", () => {
  let bus: Bus;
  let stream: string;
  let consumer: Consumer;
  beforeAll(async () => {
    bus = await openTestBus("buswq");
    stream = bus.streamName("RUNS");
    await ensureStreams(bus, [runsStream({ prefix: bus.prefix })]);
    // The production definition with a short ack_wait so redelivery is observable.
    await ensureConsumers(bus, [{ ...runWorkersConsumer({ prefix: bus.prefix }), ackWaitMs: 1_000 }]);
    consumer = await bus.js.consumers.get(stream, "run-workers");
  });
  afterAll(async () => {
    await deleteStreamsOf(bus);
    await bus.close();
  });

  const messagesInStream = async () => (await bus.jsm.streams.info(stream)).state.messages;

  it("removes a run once a worker acks it", async () => {
    await publish(bus, systemSubjects(bus.prefix).runs("wf-1"), { task: "a" }, { msgID: "run-a" });
    expect(await messagesInStream()).toBe(1);
    const msg = await consumer.next({ expires: 5_000 });
    expect(msg?.json()).toEqual({ task: "a" });
    expect(await msg!.ackAck()).toBe(true);
    expect(await messagesInStream()).toBe(0);
    expect(await consumer.next({ expires: 1_500 })).toBeNull();
  });

  it("redelivers a run that is not acked within ack_wait", async () => {
    await publish(bus, systemSubjects(bus.prefix).runs("wf-2"), { task: "b" });
    const first = await consumer.next({ expires: 5_000 });
    expect(first?.json()).toEqual({ task: "b" });
    expect(first?.redelivered).toBe(false);
    const startedAt = Date.now();
    // No ack: the worker "crashed".
    const again = await consumer.next({ expires: 5_000 });
    expect(Date.now() - startedAt).toBeGreaterThanOrEqual(800);
    expect(again?.seq).toBe(first?.seq);
    expect(again?.redelivered).toBe(true);
    expect(again?.info.deliveryCount).toBe(2);
    expect(await messagesInStream()).toBe(1);
    await again!.ackAck();
    expect(await messagesInStream()).toBe(0);
  });
});
