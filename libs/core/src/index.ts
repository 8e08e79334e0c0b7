export {
  AppError,
  type AppErrorOptions,
  ConfigError,
  ConflictError,
  type ErrorCode,
  ForbiddenError,
  isAppError,
  isDependencyUnavailable,
  NotFoundError,
  OverloadedError,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamUnavailableError,
  ValidationError,
} from "./errors.ts";
export {
  baseConfigShape,
  type ConfigShape,
  type ConfigVariable,
  describeConfig,
  type Env,
  envBoolean,
  envInt,
  envList,
  envNumber,
  loadConfig,
} from "./config.ts";
export { formatTraceparent, parseTraceparent, type TraceParent } from "./trace-context.ts";
export {
  autoInstrumented,
  context,
  type Context,
  ContractTraceContextPropagator,
  currentTraceIds,
  extractTraceContext,
  initTelemetry,
  injectTraceContext,
  parseResourceAttributes,
  samplerFor,
  type Span,
  SpanKind,
  spansExported,
  SpanStatusCode,
  setHttpRoute,
  type Telemetry,
  type TelemetryConfig,
  type TelemetryOptions,
  telemetryOptionsOf,
  trace,
  tracer,
  type TracesSampler,
  withOptionalSpan,
  withSpan,
} from "./telemetry.ts";
export { createLogger, type Logger, type LoggerOptions } from "./logger.ts";
export { Lifecycle, type LifecycleOptions, type ShutdownStage } from "./lifecycle.ts";
export { type BootedService, bootService, logTracing } from "./boot.ts";
export { type PeriodicJob, type PeriodicJobOptions, startPeriodicJob } from "./periodic-job.ts";
export {
  type Dependency,
  DependencyUnavailableError,
  redactUrl,
  startFailureFields,
  startFailureMessage,
  waitForDependency,
  type WaitForDependencyOptions,
} from "./dependency.ts";
export { clientErrorResponse, installJsonClientErrors, rawJsonError } from "./http-json-errors.ts";
export { isUuid, newId } from "./ids.ts";
