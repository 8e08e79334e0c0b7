import type { RequestHandler } from "express";
import helmet from "helmet";

/**
 * The page's security headers. The console ships only same-origin files (no inline script or
 * style, no CDN), so the policy is strict: everything from 'self', and the API's origin for
 * fetch when CONSOLE_API_BASE_URL is on another origin. Images may be data: URIs (the
 * stylesheet's icons). HSTS is the TLS edge's business (Ingress), not this plain-HTTP service's.
 */
export function securityHeaders(apiBaseUrl: string): RequestHandler {
  const connect = ["'self'"];
  if (/^https?:\/\//.test(apiBaseUrl)) connect.push(new URL(apiBaseUrl).origin);
  return helmet({
    contentSecurityPolicy: {
      useDefaults: false,
      directives: {
        defaultSrc: ["'self'"],
        scriptSrc: ["'self'"],
        styleSrc: ["'self'"],
        imgSrc: ["'self'", "data:"],
        fontSrc: ["'self'"],
        connectSrc: connect,
        objectSrc: ["'none'"],
        baseUri: ["'self'"],
        formAction: ["'self'"],
        frameAncestors: ["'none'"],
      },
    },
    strictTransportSecurity: false,
    // The API key lives in this page's session storage: no framing, no referrer.
    xFrameOptions: { action: "deny" },
    referrerPolicy: { policy: "no-referrer" },
  });
}
