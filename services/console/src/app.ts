import type { Express } from "express";
import type { Logger } from "@tog/core";
import { createHttpApp } from "@tog/edge";
import type { Metrics } from "@tog/ops";
import { createConsoleRouter } from "./console.routes.ts";
import { createHealthRouter } from "./health.routes.ts";
import { securityHeaders } from "./security-headers.ts";

export interface ConsoleAppOptions {
  logger: Logger;
  webDir: string;
  apiBaseUrl: string;
  version: string;
  metrics?: Metrics | undefined;
}

// Only GET routes: a tiny body limit is enough.
const MAX_BODY_BYTES = 16 * 1024;

/**
 * The console's HTTP app: the edge's common stack (trace context, request log, JSON 404 and
 * errors), the page's security headers, probes and the page. The page is same-origin with the
 * public router, so CORS stays at the edge's production setting with no origin allowed.
 */
export function createConsoleApp(options: ConsoleAppOptions): Express {
  return createHttpApp({
    logger: options.logger,
    metrics: options.metrics,
    maxBodyBytes: MAX_BODY_BYTES,
    cors: { mode: "production", allowedOrigins: [] },
    routes: (app) => {
      app.use(createHealthRouter(options.version));
      app.use(securityHeaders(options.apiBaseUrl));
      app.use(createConsoleRouter({ webDir: options.webDir, apiBaseUrl: options.apiBaseUrl }));
    },
  });
}
