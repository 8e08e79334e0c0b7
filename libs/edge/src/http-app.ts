import express, { type Express, type RequestHandler } from "express";
import type { Logger } from "@tog/core";
import { httpMetrics, type Metrics } from "@tog/ops";
import { createErrorHandler } from "./error-mapper.ts";
import { createRequestContext } from "./request-context.ts";
import { createCors, type CorsSettings } from "./cors.ts";
import { guardInput, rejectOversizedBody } from "./input-guard.ts";
import { securityHeaders } from "./security-headers.ts";
import type { LoadShedder } from "./load-shedding.ts";

export interface HttpAppOptions {
  logger: Logger;
  /** Largest accepted JSON body in bytes; larger → 413. */
  maxBodyBytes: number;
  cors: CorsSettings;
  /** Request counts and latencies by route and status (served on the ops port). */
  metrics?: Metrics | undefined;
  /** Answers 503 + Retry-After at once beyond the process's capacity (load-shedding.ts). */
  shedder?: LoadShedder | undefined;
  /** Mounts the service's routes; runs after the common stack and before 404/error handling. */
  routes: (app: Express) => void;
}

/**
 * The one middleware stack every HTTP service uses:
 * [load shedding] → trace context + request log → security headers → CORS → declared size → JSON body → input
 * guard (NUL, surrogates, depth) → service routes → JSON 404 → error mapper.
 * Auth, rate limits and idempotency are per-route middleware (see index.ts).
 */
export function createHttpApp(options: HttpAppOptions): Express {
  const app = express();
  app.disable("x-powered-by");
  app.set("trust proxy", true);
  app.set("etag", false);
  if (options.metrics) app.use(httpMetrics(options.metrics));
  // First after the metrics (which count the 503s): a shed request costs nothing else.
  if (options.shedder) app.use(options.shedder.middleware);
  app.use(createRequestContext({ logger: options.logger }));
  app.use(securityHeaders);
  app.use(createCors(options.cors));
  app.use(rejectOversizedBody(options.maxBodyBytes));
  app.use(express.json({ limit: options.maxBodyBytes, strict: true }));
  app.use(guardInput);
  options.routes(app);
  app.use(notFound);
  app.use(createErrorHandler(options.logger));
  return app;
}

const notFound: RequestHandler = (_req, res) => {
  res.status(404).json({ error: "Not found" });
};
