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
    "How long the EVENTS stream keeps workflow events (the real-time replay window for streaming clients); older events are read from the database.",
  ),
};
