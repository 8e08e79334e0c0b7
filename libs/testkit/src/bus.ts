import { createLogger } from "@tog/core";
import {
  connectBus,
  ensureConsumers,
  ensureStreams,
  systemSubjects,
  systemTopology,
  type Bus,
  type TopologyOptions,
} from "@tog/bus";
import { eventTextsOf } from "@tog/events";
import { testInfraConfig, uniqueId } from "./infra.ts";

/** A bus on the shared test NATS with a subject/stream prefix of its own. */
export async function openTestBus(label: string, prefix = uniqueId(label).toLowerCase()): Promise<Bus> {
  return connectBus({
    url: testInfraConfig.TEST_NATS_URL,
    name: `test-${label}`,
    prefix,
    logger: createLogger({ service: "test", level: "silent" }),
  });
}

/** Creates the system's streams and consumers under the bus's prefix. */
export async function provisionTestBus(bus: Bus, options: Omit<TopologyOptions, "prefix"> = {}): Promise<void> {
  const topology = systemTopology({ prefix: bus.prefix, ...options });
  await ensureStreams(bus, topology.streams);
  await ensureConsumers(bus, topology.consumers);
}

/** Deletes every stream whose name starts with the bus's `<PREFIX>_`. */
export async function deleteStreamsOf(bus: Bus): Promise<void> {
  const mine = `${bus.prefix.toUpperCase()}_`;
  const names: string[] = [];
  for await (const name of bus.jsm.streams.names()) if (name.startsWith(mine)) names.push(name);
  await Promise.all(names.map((n) => bus.jsm.streams.delete(n)));
}

/**
 * A task's messages on the EVENTS stream, in stream order, each split into its event texts
 * (docs/decisions.md "One message per write"): what a reader of the subject gets.
 */
export async function messagesOnBus(bus: Bus, taskId: string): Promise<string[][]> {
  const subject = systemSubjects(bus.prefix).events(taskId);
  const out: string[][] = [];
  for (let from = 0; ; ) {
    // `next_by_subj` is understood by 2.9 servers; the client's type only lists seq/last_by_subj.
    const msg = await bus.jsm.streams
      .getMessage(bus.streamName("EVENTS"), { seq: from, next_by_subj: subject } as never)
      .catch(() => null);
    if (!msg) return out;
    out.push(eventTextsOf(msg.string()));
    from = msg.seq + 1;
  }
}

/** A task's event texts on the EVENTS stream, in stream order. */
export async function eventTextsOnBus(bus: Bus, taskId: string): Promise<string[]> {
  return (await messagesOnBus(bus, taskId)).flat();
}
