export { createConsoleApp, type ConsoleAppOptions } from "./app.ts";
export { consoleConfigShape, loadConsoleConfig, type ConsoleConfig } from "./config.ts";
export { CONSOLE_PREFIX } from "./console.routes.ts";
export { WEB_BUILD_DIR, requireWebBuild } from "./web-build.ts";
