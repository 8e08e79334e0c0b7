import { z } from "zod";
import { envInt } from "@tog/core";

/** Subject prefix: lower-case so subjects stay lower-case and stream names (upper-cased) stay valid. */
export const NATS_PREFIX_PATTERN = /^[a-z0-9_-]+$/;

export const busConfigShape = {
  NATS_URL: z
    .string()
    .min(1)
    .default("nats://127.0.0.1:4222")
    .describe("NATS server URL with JetStream enabled; several servers of one cluster separated by commas."),
  NATS_PREFIX: z
    .string()
    .regex(NATS_PREFIX_PATTERN, "must match [a-z0-9_-]+")
    .default("tog")
    .describe(
      "Prefix of every NATS subject (`<prefix>.events.…`, `<prefix>.runs.…`) and, upper-cased, of every JetStream stream name (`<PREFIX>_EVENTS`); lets deployments or tests share one NATS.",
    ),
  EVENTS_MAX_AGE_SECONDS: envInt(3_600, 1).describe(
    "How long the EVENTS stream keeps task events (the real-time replay window for streaming clients); older events are read from the database.",
  ),
  RUN_ACK_WAIT_SECONDS: envInt(3, 1, 3_600).describe(
    "A run held by a worker that stops heartbeating (crashed, frozen) is redelivered to another worker after this long; workers heartbeat at a third of it. With RUN_LEASE_MS it bounds how soon a crashed worker's runs restart elsewhere.",
  ),
  NATS_STREAM_REPLICAS: envInt(1, 1, 5).describe(
    "Copies of each JetStream stream (bus:setup): 1 on a single server; 3 on a 3-server cluster, so losing one server interrupts nothing (docs/reliability.md).",
  ),
  RUNS_MAX_PENDING: envInt(1_000_000, 1).describe(
    "Queued runs the RUNS stream holds; beyond it submissions are refused with 503 (System overloaded) instead of queueing without bound.",
  ),
};

/** Topology options from the bus config. */
export function topologyOptionsOf(config: {
  NATS_PREFIX: string;
  EVENTS_MAX_AGE_SECONDS: number;
  RUN_ACK_WAIT_SECONDS: number;
  RUNS_MAX_PENDING: number;
  NATS_STREAM_REPLICAS?: number;
}) {
  return {
    prefix: config.NATS_PREFIX,
    eventsMaxAgeSeconds: config.EVENTS_MAX_AGE_SECONDS,
    runAckWaitSeconds: config.RUN_ACK_WAIT_SECONDS,
    runsMaxPending: config.RUNS_MAX_PENDING,
    replicas: config.NATS_STREAM_REPLICAS ?? 1,
  };
}
