export {
  createGatewayApp,
  type GatewayApp,
  type GatewayAppOptions,
  type RouteContext,
  type RouteModule,
} from "./app.ts";
export {
  gatewayConfigShape,
  keysCliConfigShape,
  loadGatewayConfig,
  loadKeysCliConfig,
  type GatewayConfig,
} from "./config.ts";
export { GATEWAY_VERSION } from "./version.ts";
export { taskRoutes, TASK_LIST_RPM, type TaskRoutesOptions } from "./tasks/task.routes.ts";
