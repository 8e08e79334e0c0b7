import type { RequestHandler } from "express";
import type { Metrics } from "./metrics.ts";

/**
 * `tog_http_requests_total` and `tog_http_request_duration_seconds` by method, route template
 * (never the raw path: ids would explode the label set) and status. Streams count when they end.
 */
export function httpMetrics(metrics: Metrics): RequestHandler {
  const requests = metrics.counter("tog_http_requests_total", "HTTP requests by method, route and status.", [
    "method",
    "route",
    "status",
  ]);
  const duration = metrics.histogram(
    "tog_http_request_duration_seconds",
    "HTTP request latency by method, route and status.",
    ["method", "route", "status"],
  );
  return (req, res, next) => {
    const start = process.hrtime.bigint();
    res.once("finish", () => {
      const route = req.route?.path === undefined ? "unmatched" : `${req.baseUrl}${String(req.route.path)}`;
      const labels = { method: req.method, route, status: String(res.statusCode) };
      requests.inc(labels);
      duration.observe(labels, Number(process.hrtime.bigint() - start) / 1e9);
    });
    next();
  };
}
