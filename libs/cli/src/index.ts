export { buildProgram, runCli } from "./program.ts";
export { resolveConfig, configFilePath, DEFAULT_BASE_URL, type CliConfig } from "./config.ts";
export { EXIT, exitCodeOf, exitCodeOfStatus } from "./exit-codes.ts";
export { LiveView, type LiveViewOptions } from "./live-view.ts";
export { parseContextPairs } from "./context-pairs.ts";
