import { createRequire } from "node:module";
import path from "node:path";
import type { Response, Router } from "express";

// Interactive API documentation at /api/v1/docs: Swagger UI from the swagger-ui-dist package,
// served by the gateway itself (no CDN, no third-party request), reading /api/v1/openapi.json. The page has no inline
// script, so it works under a strict Content-Security-Policy (script-src 'self').

const DOCS_PATH = "/api/v1/docs";
const ASSETS = [
  "swagger-ui.css",
  "swagger-ui-bundle.js",
  "swagger-ui-standalone-preset.js",
  "favicon-32x32.png",
  "favicon-16x16.png",
];

const PAGE = `<!doctype html>
<html lang="en">
<head>
  <meta charset="utf-8">
  <title>Task Orchestration Gateway API</title>
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <link rel="stylesheet" href="${DOCS_PATH}/swagger-ui.css">
  <link rel="icon" type="image/png" href="${DOCS_PATH}/favicon-32x32.png" sizes="32x32">
</head>
<body>
  <div id="swagger-ui"></div>
  <script src="${DOCS_PATH}/swagger-ui-bundle.js"></script>
  <script src="${DOCS_PATH}/swagger-ui-standalone-preset.js"></script>
  <script src="${DOCS_PATH}/init.js"></script>
</body>
</html>
`;

// validatorUrl null: Swagger UI otherwise shows a badge loaded from validator.swagger.io (a
// third-party request carrying the document's URL) on any host but localhost.
const INIT = `window.ui = SwaggerUIBundle({
  url: "/api/v1/openapi.json",
  validatorUrl: null,
  dom_id: "#swagger-ui",
  deepLinking: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout",
});
`;

function assetDir(): string {
  const require = createRequire(import.meta.url);
  return path.dirname(require.resolve("swagger-ui-dist/package.json"));
}

/**
 * The API's own policy (`default-src 'none'`, libs/edge) would block this page's files, so the
 * docs get one that admits exactly them: scripts, styles, the document and images from 'self'
 * (data: for the stylesheet's icons; inline styles), nothing else, no framing.
 */
const DOCS_CSP = [
  "default-src 'none'",
  "script-src 'self'",
  // Swagger UI's React components set a few inline styles; scripts stay 'self' only.
  "style-src 'self' 'unsafe-inline'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "font-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join("; ");

function docsHeaders(res: Response, cacheControl: string): void {
  res.setHeader("Content-Security-Policy", DOCS_CSP);
  // Set explicitly: the edge's `Cache-Control: no-store` would otherwise win (sendFile keeps a set one).
  res.setHeader("Cache-Control", cacheControl);
}

export function registerDocsRoutes(router: Router): void {
  const dir = assetDir();
  router.get([DOCS_PATH, `${DOCS_PATH}/`], (_req, res) => {
    docsHeaders(res, "no-cache");
    res.type("html").send(PAGE);
  });
  router.get(`${DOCS_PATH}/init.js`, (_req, res) => {
    docsHeaders(res, "no-cache");
    res.type("application/javascript").send(INIT);
  });
  for (const asset of ASSETS) {
    const file = path.join(dir, asset);
    router.get(`${DOCS_PATH}/${asset}`, (_req, res, next) => {
      docsHeaders(res, "public, max-age=86400");
      res.sendFile(file, (err) => {
        if (err) next(err);
      });
    });
  }
}
