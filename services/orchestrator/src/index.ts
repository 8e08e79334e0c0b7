export { orchestratorConfigShape, workerConfigShape, type OrchestratorConfig, type WorkerConfig } from "./config.ts";
export { TaskService, type TaskServiceOptions } from "./tasks/task.service.ts";
export { specFromCommand } from "./tasks/task-spec.ts";
export { RunRepository, LeaseLostError, type ClaimedTask, type ClaimResult } from "./runtime/run.repository.ts";
export { ApprovalRepository } from "./runtime/approval.repository.ts";
export { startRunWorker, type RunWorker, type RunWorkerOptions } from "./runtime/run-worker.ts";
export { runClaimedTask, type RunnerDeps, type RunEnd } from "./runtime/run.ts";
export { createSignalListener, type SignalListener } from "./runtime/signal-listener.ts";
export * from "./runtime/flow-context.ts";
