export { freePort, canConnect } from "./free-port.ts";
export {
  startService,
  childEnv,
  ServiceStartError,
  type StartServiceOptions,
  type RunningService,
  type OutputLine,
  type LogRecord,
  type ExitInfo,
  type Env,
} from "./service-process.ts";
export { runNodeScript, ScriptFailedError, type RunScriptOptions, type ScriptResult } from "./run-script.ts";
export { startRouter, type Router, type RouterOptions, type RouteRule } from "./router.ts";
export { SERVICES, workerLayout, type ServiceDefinition, type StackContext } from "./services.ts";
export {
  startStack,
  existingServices,
  routesFor,
  resolveRouterKind,
  type Stack,
  type StackOptions,
  type RouterKind,
} from "./stack.ts";
export { startNginxRouter, findNginx, nginxConfig, type NginxRouter, type NginxRouterOptions } from "./nginx-router.ts";
export { runBusSetup, BUS_SETUP_ENTRY } from "./bus-setup.ts";
export { REPO_ROOT } from "./paths.ts";
export { OPS_PORT_LOG } from "./service-process.ts";
export { formatBanner, type BannerOptions, type BannerService } from "./banner.ts";
export { chooseLogFormat, prettyLogFormatter, prettyLogStream, type LogFormat } from "./pretty.ts";
