export * from "./errors.ts";
export * from "./config.ts";
export * from "./trace-context.ts";
export * from "./telemetry.ts";
export * from "./logger.ts";
export * from "./lifecycle.ts";
export * from "./boot.ts";
export * from "./periodic-job.ts";
