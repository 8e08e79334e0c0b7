import { loadPackageDefinition } from "@grpc/grpc-js";
import { loadSync } from "@grpc/proto-loader";
import type { ProtoGrpcType } from "./generated/orchestrator.ts";
import type { TaskOrchestratorDefinition } from "./generated/tog/orchestrator/v1/TaskOrchestrator.ts";
import { ORCHESTRATOR_PROTO, PROTO_LOADER_OPTIONS, PROTO_ROOT } from "./proto-loader-options.ts";

/** Fully qualified service name, also the prefix of every method path and span name. */
export const ORCHESTRATOR_SERVICE_NAME = "tog.orchestrator.v1.TaskOrchestrator";

let cached: TaskOrchestratorDefinition | undefined;

/** The service definition, parsed from the .proto once per process (client and server share it). */
export function orchestratorServiceDefinition(): TaskOrchestratorDefinition {
  if (!cached) {
    const packageDefinition = loadSync(ORCHESTRATOR_PROTO, { ...PROTO_LOADER_OPTIONS, includeDirs: [PROTO_ROOT] });
    const proto = loadPackageDefinition(packageDefinition) as unknown as ProtoGrpcType;
    cached = proto.tog.orchestrator.v1.TaskOrchestrator.service;
  }
  return cached;
}
