export * from "./task-orchestrator.ts";
export { createOrchestratorClient, type OrchestratorClient, type OrchestratorClientOptions } from "./client.ts";
export { startOrchestratorServer, type OrchestratorServer, type OrchestratorServerOptions } from "./server.ts";
export { DEFAULT_ORCHESTRATOR_DEADLINE_MS, orchestratorClientConfigShape } from "./config.ts";
export { ORCHESTRATOR_SERVICE_NAME } from "./orchestrator-definition.ts";
export { clientCredentialsOf, serverCredentialsOf, orchestratorClientTlsConfigShape, orchestratorServerTlsConfigShape, type ClientTls } from "./tls.ts";
