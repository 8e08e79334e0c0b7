import type http from "node:http";
import type { SpanContext } from "@opentelemetry/api";
import {
  autoInstrumented,
  context,
  extractTraceContext,
  isAppError,
  setHttpRoute,
  SpanKind,
  trace,
  tracer,
  type Logger,
} from "@tog/core";
import { NOSNIFF_NO_STORE, statusOf, type CorsSettings } from "@tog/edge";
import { SSE_PATH } from "@tog/api";
import type { StreamContext } from "../stream-context.ts";
import { countStreamOpen } from "../stream-rate-limit.ts";
import { groupQuery, streamRequestFromQuery } from "../stream-request.ts";
import type { Ticker } from "../ticker.ts";
import { serveSse, type HeaderList, type SseSink } from "./sse-stream.ts";

// GET /api/v1/stream/sse served straight from node:http, in front of the express app. A
// stream's request and response live as long as the stream, so whatever a framework hangs on
// them is paid per idle connection (measured: the express + edge stack about doubles the heap a
// bare node:http stream holds). This path keeps the same rules — CORS (the edge's policy),
// header-only credentials, the one error body, a span and one log line per request —
// and everything else (preflights, probes, the OpenAPI document, the documented express route)
// stays on the express app.

export interface SseEndpoint {
  /** Handles GET /api/v1/stream/sse; false for any other request (the caller passes it on). */
  handle(req: http.IncomingMessage, res: http.ServerResponse): boolean;
  /**
   * Authenticates, counts the open (rate limit), validates and streams; rejects with the error to
   * answer (express route). Appends the X-RateLimit-* headers to `extraHeaders` once counted.
   */
  open(req: http.IncomingMessage, res: http.ServerResponse, extraHeaders?: HeaderList): Promise<void>;
}

export function createSseEndpoint(ctx: StreamContext, keepAlive: Ticker<SseSink>, cors: CorsSettings): SseEndpoint {
  const { logger } = ctx;

  async function open(
    req: http.IncomingMessage,
    res: http.ServerResponse,
    extraHeaders: HeaderList = [],
  ): Promise<void> {
    const url = req.url ?? "/";
    const principal = await ctx.auth.authenticate({ headers: req.headers, url } as never, { allowBearer: true });
    // Credentials, then the rate limit, then the parameters: the gateway's order (docs/decisions.md).
    await countStreamOpen(ctx, principal, extraHeaders);
    const q = url.indexOf("?");
    const query = Object.fromEntries(groupQuery(new URLSearchParams(q < 0 ? "" : url.slice(q + 1))));
    const request = streamRequestFromQuery(query, req.headers["last-event-id"]);
    await serveSse(ctx, keepAlive, principal, res, request, extraHeaders);
  }

  return {
    open,
    handle(req, res) {
      if (req.method !== "GET" || pathOf(req.url) !== SSE_PATH) return false;
      const started = performance.now();
      const headers = corsHeaders(req.headers.origin, cors);
      // `headers` collects what every answer carries: CORS, then the rate-limit headers once counted.
      const instrumented = autoInstrumented() ? trace.getActiveSpan() : undefined;
      if (instrumented) {
        // The HTTP instrumentation's server span (spans exported): named by the path, it covers
        // the stream's whole life and is ended by the instrumentation.
        setHttpRoute(SSE_PATH);
        logAtClose(res, instrumented.spanContext(), started, logger);
        open(req, res, headers).catch((err: unknown) => answerError(res, err, headers, logger));
        return true;
      }
      // The span covers opening the stream (auth, ownership, replay), not its whole life; the
      // request's log line at close only needs its ids.
      const span = tracer().startSpan(`GET ${SSE_PATH}`, { kind: SpanKind.SERVER }, extractTraceContext(req.headers));
      logAtClose(res, span.spanContext(), started, logger);
      context
        .with(trace.setSpan(context.active(), span), () => open(req, res, headers))
        .catch((err: unknown) => answerError(res, err, headers, logger))
        .finally(() => {
          span.setAttribute("http.response.status_code", res.statusCode);
          span.end();
        });
      return true;
    },
  };
}

/** One "request" log line when the stream closes. A function of its own, so the closure holds only what the line needs (not the span). */
function logAtClose(res: http.ServerResponse, ids: SpanContext, started: number, logger: Logger): void {
  // `on`, not `once`: close fires once, and `once` would add a wrapper per stream.
  res.on("close", () => {
    context.with(trace.setSpan(context.active(), trace.wrapSpanContext(ids)), () =>
      logger.info(
        { method: "GET", path: SSE_PATH, status: res.statusCode, duration_ms: performance.now() - started },
        "request",
      ),
    );
  });
}

/** The edge's CORS answer for a simple GET (libs/edge cors.ts): `*` in development, the matching origin in production. */
export function corsHeaders(origin: string | undefined, settings: CorsSettings): HeaderList {
  if (settings.mode === "development") return ["Access-Control-Allow-Origin", "*"];
  if (origin !== undefined && settings.allowedOrigins.includes(origin))
    return ["Access-Control-Allow-Origin", origin, "Vary", "Origin"];
  return ["Vary", "Origin"];
}

function pathOf(url: string | undefined): string {
  const raw = url ?? "/";
  const q = raw.indexOf("?");
  return q < 0 ? raw : raw.slice(0, q);
}

/** The edge's error bodies (libs/edge error-mapper.ts), for a request outside express. */
function answerError(res: http.ServerResponse, err: unknown, headers: HeaderList, logger: Logger): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  const known = isAppError(err) ? err : undefined;
  const status = known ? statusOf(known) : 500;
  if (status >= 500) logger.error({ err, path: SSE_PATH }, known ? "request failed" : "unhandled error");
  const body = JSON.stringify(known ? { error: known.message, ...known.details } : { error: "Internal server error" });
  res.writeHead(status, [
    ...headers,
    ...NOSNIFF_NO_STORE,
    "Content-Type",
    "application/json; charset=utf-8",
    "Content-Length",
    String(Buffer.byteLength(body)),
  ]);
  res.end(body);
}
