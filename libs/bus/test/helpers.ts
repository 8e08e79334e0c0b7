import { createLogger, type Logger } from "@tog/core";
import { testInfraConfig, uniqueId } from "@tog/testkit";
import { connectBus, eventPersisterConsumer, type Bus, type ConsumerDefinition } from "@tog/bus";

export const silentLogger: Logger = createLogger({ service: "bus-test", level: "silent" });

/** A bus on the shared test NATS with a prefix of its own. */
export async function openTestBus(label: string, prefix = uniqueId(label)): Promise<Bus> {
  return connectBus({ url: testInfraConfig.TEST_NATS_URL, name: `test-${label}`, prefix, logger: silentLogger });
}

/** Deletes every stream whose name starts with the bus's `<PREFIX>_`. */
export async function deleteStreamsOf(bus: Bus): Promise<void> {
  const mine = `${bus.prefix.toUpperCase()}_`;
  const names: string[] = [];
  for await (const name of bus.jsm.streams.names()) if (name.startsWith(mine)) names.push(name);
  await Promise.all(names.map((n) => bus.jsm.streams.delete(n)));
}

/** The event persister's consumer as a release before its inactivity threshold made it. */
export function earlierPersisterConsumer(prefix: string, durable?: string): ConsumerDefinition {
  const { inactiveThresholdMs: _, ...earlier } = eventPersisterConsumer({ prefix });
  return durable === undefined ? earlier : { ...earlier, durable };
}
