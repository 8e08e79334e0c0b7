import { envInt } from "@tog/core";

// Durable event log: how the persister batches writes and how long PostgreSQL keeps events.
export const eventsConfigShape = {
  EVENT_RETENTION_DAYS: envInt(90, 0, 36_500).describe(
    "Days the database keeps task events (by event timestamp); older ones are purged in batches by one orchestrator instance at a time. 0 keeps events forever.",
  ),
  EVENT_RETENTION_INTERVAL_SECONDS: envInt(3_600, 1).describe("Seconds between two runs of the event retention purge."),
  EVENT_PERSIST_BATCH: envInt(500, 1, 1_000).describe(
    "Most events the persister writes in one INSERT; a smaller batch is written after 20 ms. At most 1000 (the persister consumer's max_ack_pending).",
  ),
};
