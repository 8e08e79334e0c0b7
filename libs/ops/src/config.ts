import { z } from "zod";
import { envInt, type ConfigShape } from "@tog/core";

/** The internal ops port of every service: Prometheus metrics and a liveness probe. */
export const opsConfigShape = {
  METRICS_PORT: envInt(9464, 0, 65_535).describe(
    "Internal ops port: GET /metrics (Prometheus text format) and GET /health. Keep it off the public network; 0 picks a free port.",
  ),
  METRICS_HOST: z.string().min(1).default("0.0.0.0").describe("Listen address of the ops port."),
} satisfies ConfigShape;
