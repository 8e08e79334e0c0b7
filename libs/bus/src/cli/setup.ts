// `npm run bus:setup`: creates or converges the system's JetStream streams and durable consumers.
import { baseConfigShape, createLogger, loadConfig } from "@tog/core";
import { busConfigShape, topologyOptionsOf } from "../config.ts";
import { connectBus, type Bus } from "../connection.ts";
import { ensureConsumers, ensureStreams } from "../provisioning.ts";
import { eventPersisterConsumer, systemTopology } from "../streams.ts";

const config = loadConfig({ ...baseConfigShape, ...busConfigShape });
const logger = createLogger({ service: "bus-setup", level: config.LOG_LEVEL });
let bus: Bus | undefined;
try {
  bus = await connectBus({ url: config.NATS_URL, name: "bus-setup", prefix: config.NATS_PREFIX, logger });
  const topology = systemTopology(topologyOptionsOf(config));
  const results = [
    ...(await ensureStreams(bus, topology.streams)),
    ...(await ensureConsumers(bus, topology.consumers)),
    // Made by the orchestrator only during an upgrade; one an earlier release left gets the
    // inactivity threshold, so the server removes it (docs/decisions.md "Event log").
    ...(await ensureConsumers(bus, [eventPersisterConsumer(topologyOptionsOf(config))], { create: false })),
  ];
  for (const r of results) {
    if (r.action === "absent") continue;
    const resource = r.stream ? `${r.stream}/${r.name}` : r.name;
    logger.info({ kind: r.kind, resource, action: r.action, changes: r.changes }, `${r.kind} ${resource} ${r.action}`);
  }
  logger.info("nats streams and consumers ready");
} catch (err) {
  logger.error({ err }, "nats setup failed");
  process.exitCode = 1;
} finally {
  await bus?.close();
}
