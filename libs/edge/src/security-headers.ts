import type { RequestHandler } from "express";
import helmet from "helmet";

// Response headers of every HTTP service (docs/security.md, "Headers"). helmet's set for an API
// that serves only JSON and event streams: nothing may be framed, sniffed or run as a page.
// Computed once; per request it is a handful of setHeader calls. `Cache-Control: no-store`:
// responses carry one user's data (or errors about it); routes that may be cached (none today)
// override it.

const helmetHeaders = helmet({
  contentSecurityPolicy: { useDefaults: false, directives: { defaultSrc: ["'none'"], frameAncestors: ["'none'"] } },
  // API responses are read cross-origin by browser clients allowed by CORS.
  crossOriginResourcePolicy: { policy: "cross-origin" },
  crossOriginOpenerPolicy: false,
  originAgentCluster: false,
  xDnsPrefetchControl: false,
  xDownloadOptions: false,
  xPermittedCrossDomainPolicies: false,
  xXssProtection: false,
});

/**
 * The two headers every response must carry (docs/security.md, "Headers"), as name/value pairs for
 * responses written outside express (the stream service's SSE path).
 */
export const NOSNIFF_NO_STORE: readonly string[] = ["X-Content-Type-Options", "nosniff", "Cache-Control", "no-store"];

export const securityHeaders: RequestHandler = (req, res, next) => {
  res.setHeader("Cache-Control", "no-store");
  helmetHeaders(req, res, next);
};
