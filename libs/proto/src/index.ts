export {
  API_TASK_STATUSES,
  apiTaskStatus,
  type ApiTaskStatus,
  type ApprovalDecisionCommand,
  type ApprovalDecisionResult,
  type CancelTaskResult,
  displayMode,
  EXECUTION_MODES,
  type ExecutionMode,
  executionModeOf,
  type ListTasksQuery,
  type ListTasksResult,
  REQUEST_MODES,
  type RequestMode,
  type SubmitTaskCommand,
  type SubmitTaskResult,
  TASK_STATUSES,
  type TaskDetail,
  type TaskEventsQuery,
  type TaskEventsResult,
  type TaskOrchestrator,
  type TaskStatus,
  type TaskUsage,
  type TimelineEntry,
  type TimelineQuery,
  type TimelineResult,
} from "./task-orchestrator.ts";
export { createOrchestratorClient, type OrchestratorClient, type OrchestratorClientOptions } from "./client.ts";
export { startOrchestratorServer, type OrchestratorServer, type OrchestratorServerOptions } from "./server.ts";
export { DEFAULT_ORCHESTRATOR_DEADLINE_MS, orchestratorClientConfigShape } from "./config.ts";
export { ORCHESTRATOR_SERVICE_NAME } from "./orchestrator-definition.ts";
export {
  clientCredentialsOf,
  serverCredentialsOf,
  orchestratorClientTlsConfigShape,
  orchestratorServerTlsConfigShape,
  type ClientTls,
} from "./tls.ts";
