export { opsConfigShape } from "./config.ts";
export { createMetrics, LATENCY_BUCKETS, type Metrics } from "./metrics.ts";
export { httpMetrics } from "./http-metrics.ts";
export { startOpsServer, startServiceOps, type OpsServer, type OpsServerOptions } from "./ops-server.ts";
export {
  natsCheck,
  pingCheck,
  postgresCheck,
  readinessHandler,
  redisCheck,
  runReadiness,
  type ReadinessCheck,
  type ReadinessHandlerOptions,
  type ReadinessReport,
} from "./readiness.ts";
