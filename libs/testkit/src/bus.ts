import { createLogger } from "@tog/core";
import { connectBus, ensureConsumers, ensureStreams, systemTopology, type Bus, type TopologyOptions } from "@tog/bus";
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
