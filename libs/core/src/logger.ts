import { pino, type Logger, type DestinationStream } from "pino";
import { currentTraceIds } from "./telemetry.ts";

export type { Logger };

export interface LoggerOptions {
  service: string;
  level?: string;
  /** Tests pass a stream to read what was logged. */
  destination?: DestinationStream;
}

// Whatever a caller logs, these never reach the output.
const REDACT = [
  "password",
  "secret",
  "token",
  "apiKey",
  "api_key",
  "authorization",
  "*.password",
  "*.secret",
  "*.token",
  "*.apiKey",
  "*.api_key",
  "*.authorization",
  'req.headers["x-api-key"]',
  "req.headers.authorization",
  "req.headers.cookie",
  "headers.authorization",
  'headers["x-api-key"]',
];

/** pino logger whose every line carries the active span's `trace_id` and `span_id`. */
export function createLogger(options: LoggerOptions): Logger {
  return pino(
    {
      name: options.service,
      level: options.level ?? "info",
      base: { service: options.service },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: REDACT, censor: "[redacted]" },
      formatters: { level: (label) => ({ level: label }) },
      mixin: () => currentTraceIds() ?? {},
    },
    options.destination,
  );
}
