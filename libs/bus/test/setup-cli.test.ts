import { execFile } from "node:child_process";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testInfraConfig } from "@tog/testkit";
import {
  EVENT_PERSISTER,
  EVENT_PERSISTER_INACTIVE_MS,
  ensureConsumers,
  ensureStreams,
  eventsStream,
  type Bus,
} from "@tog/bus";
import { deleteStreamsOf, earlierPersisterConsumer, openTestBus } from "./helpers.ts";

// `npm run bus:setup` as an operator or an init container runs it: its own process.
const SETUP = fileURLToPath(new URL("../src/cli/setup.ts", import.meta.url));
const run = promisify(execFile);
const setup = (prefix: string) =>
  run(process.execPath, [SETUP], {
    env: { PATH: process.env.PATH, NATS_URL: testInfraConfig.TEST_NATS_URL, NATS_PREFIX: prefix, LOG_LEVEL: "warn" },
    timeout: 60_000,
  });

describe("bus:setup", () => {
  let bus: Bus;
  beforeAll(async () => {
    bus = await openTestBus("bussetup");
  });
  afterAll(async () => {
    await deleteStreamsOf(bus);
    await bus.close();
  });

  it("does not make the event persister's consumer, and gives the one an earlier release left the inactivity threshold", async () => {
    await setup(bus.prefix);
    const events = bus.streamName("EVENTS");
    const persister = () => bus.jsm.consumers.info(events, EVENT_PERSISTER);
    await expect(persister()).rejects.toThrow();

    // An earlier release's orchestrator made it without a threshold.
    const earlier = earlierPersisterConsumer(bus.prefix);
    await ensureStreams(bus, [eventsStream({ prefix: bus.prefix })]);
    await ensureConsumers(bus, [earlier]);
    expect((await persister()).config.inactive_threshold ?? 0).toBe(0);

    await setup(bus.prefix);
    expect((await persister()).config.inactive_threshold).toBe(EVENT_PERSISTER_INACTIVE_MS * 1_000_000);
  });
});
