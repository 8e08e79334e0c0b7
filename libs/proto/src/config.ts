import { z } from "zod";
import { envInt, type ConfigShape } from "@tog/core";

export const DEFAULT_ORCHESTRATOR_DEADLINE_MS = 5_000;

/** Variables of a gRPC client of the orchestrator (the gateway). */
export const orchestratorClientConfigShape = {
  ORCHESTRATOR_ADDRESS: z
    .string()
    .min(1)
    .default("127.0.0.1:50051")
    .describe(
      "gRPC address of the orchestrator: host:port, or a gRPC target such as dns:///orchestrator:50051 (resolves every address of a headless service and spreads calls round-robin).",
    ),
  ORCHESTRATOR_DEADLINE_MS: envInt(DEFAULT_ORCHESTRATOR_DEADLINE_MS, 1).describe(
    "Deadline of every gRPC call to the orchestrator; a call not answered by then is answered 503 + Retry-After (the orchestrator is saturated).",
  ),
  ORCHESTRATOR_SUBMIT_BATCHES: envInt(1, 0).describe(
    'Submit calls to the orchestrator in flight at once; submits made while that many are in flight wait and go out together in one call (docs/performance.md "Submit"). 0 = one call per submit. Not used while traces are exported (each submit keeps its own call and span).',
  ),
} satisfies ConfigShape;
