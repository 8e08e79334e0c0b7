import { register as registerAsyncHooks } from "node:module";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import type { Instrumentation } from "@opentelemetry/instrumentation";
import { ExpressInstrumentation, ExpressLayerType } from "@opentelemetry/instrumentation-express";
import { GrpcInstrumentation } from "@opentelemetry/instrumentation-grpc";
import { HttpInstrumentation } from "@opentelemetry/instrumentation-http";
import { IORedisInstrumentation } from "@opentelemetry/instrumentation-ioredis";
import { PgInstrumentation } from "@opentelemetry/instrumentation-pg";
import {
  defaultResource,
  hostDetector,
  processDetector,
  resourceFromAttributes,
  serviceInstanceIdDetector,
} from "@opentelemetry/resources";
import { NodeSDK } from "@opentelemetry/sdk-node";
import { register as registerSyncHooks, supportsSyncHooks } from "import-in-the-middle/register-hooks.mjs";
import { setPreloadedSdk, type SdkStartOptions } from "./preloaded-sdk.ts";

// Loaded by the telemetry preload only when spans are exported: the ESM loader hook, the
// instrumentations and the Node SDK. Nothing here runs, or is even loaded, otherwise
// (docs/architecture.md, "Tracing").

/** Modules the instrumentations patch: the only ones the ESM loader hook intercepts. */
const PATCHED_MODULES = ["http", "https", "express", "@grpc/grpc-js", "pg", "pg-pool", "ioredis"];

// Probes and scrapes: no span (one per probe would drown the traces that matter).
const UNTRACED_PATH = /^\/(?:metrics|health|readiness|api\/v1\/health)(?:\?|$)/;

/** A literal inlined into SQL (`'…'`, `E'…'`) can hold user data: spans get `?` instead. */
export function maskSqlLiterals(sql: string): string {
  return sql.replace(/(?:\bE)?'(?:[^'\\]|''|\\.)*'/g, "?");
}

/** `pg.query:<first keyword> <database>`, also for multi-statement texts (`BEGIN;\nWITH …`). */
export function pgSpanName(sql: string, database: string | undefined): string {
  const operation = (/^\s*([A-Za-z]+)/.exec(sql)?.[1] ?? "query").toUpperCase();
  return `pg.query:${operation}${database ? ` ${database}` : ""}`;
}

export function createInstrumentations(): Instrumentation[] {
  return [
    new HttpInstrumentation({
      ignoreIncomingRequestHook: (req) => req.method === "GET" && UNTRACED_PATH.test(req.url ?? "/"),
      // Outgoing HTTP is the OTLP exporter itself and model providers over fetch (not node:http).
      disableOutgoingRequestInstrumentation: true,
    }),
    // Route handlers only: one span per middleware (CORS, JSON parser, …) is noise and cost.
    new ExpressInstrumentation({ ignoreLayersType: [ExpressLayerType.MIDDLEWARE, ExpressLayerType.ROUTER] }),
    new GrpcInstrumentation(),
    new PgInstrumentation({
      // Pool checks, migrations and periodic sweeps outside any request or run: no root spans.
      requireParentSpan: true,
      ignoreConnectSpans: true,
      enhancedDatabaseReporting: false,
      requestHook: (span, info) => {
        span.updateName(pgSpanName(info.query.text, info.connection.database));
        span.setAttribute("db.query.text", maskSqlLiterals(info.query.text));
      },
    }),
    // Command names only: keys and arguments carry user ids and idempotency keys.
    new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
  ];
}

/** Intercepts ESM imports of the patched modules (CommonJS ones are patched through require). */
function registerLoaderHook(): void {
  if (supportsSyncHooks()) registerSyncHooks({ include: PATCHED_MODULES });
  else registerAsyncHooks("import-in-the-middle/hook.mjs", import.meta.url, { data: { include: PATCHED_MODULES } });
}

function startSdk(instrumentations: Instrumentation[], options: SdkStartOptions) {
  const sdk = new NodeSDK({
    serviceName: options.serviceName,
    resource: defaultResource().merge(resourceFromAttributes(options.resourceAttributes)),
    // The OTEL_* variables were read by our config schema; the SDK's own env detector is left out.
    resourceDetectors: [serviceInstanceIdDetector, hostDetector, processDetector],
    sampler: options.sampler,
    spanProcessors: options.spanProcessors,
    contextManager: new AsyncLocalStorageContextManager(),
    textMapPropagator: options.propagator,
    instrumentations,
    // Metrics are prom-client's (libs/ops), logs are pino's: only traces go through the SDK.
    metricReaders: [],
    logRecordProcessors: [],
  });
  sdk.start();
  return { shutdown: () => sdk.shutdown() };
}

/** Enables the instrumentations now (before the service's modules load); the SDK starts in initTelemetry. */
export function enableAutoInstrumentation(): void {
  registerLoaderHook();
  const instrumentations = createInstrumentations();
  setPreloadedSdk({
    instrumentations: instrumentations.map((i) => i.instrumentationName),
    start: (options) => startSdk(instrumentations, options),
  });
}
