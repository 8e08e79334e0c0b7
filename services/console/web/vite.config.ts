import { fileURLToPath } from "node:url";
import { defineConfig } from "vite";

// The console's page: served by services/console under /console (same origin as the API
// through the public router or Ingress). Preact's JSX through Vite's own transform; no inline
// script or style in the output, so the page runs under a strict Content-Security-Policy.
export default defineConfig({
  root: fileURLToPath(new URL(".", import.meta.url)),
  base: "/console/",
  oxc: { jsx: { runtime: "automatic", importSource: "preact" } },
  build: {
    outDir: fileURLToPath(new URL("../dist", import.meta.url)),
    emptyOutDir: true,
    // Never inline assets as data: URLs into scripts; CSS icons (data:) are allowed by the CSP.
    assetsInlineLimit: 0,
    sourcemap: true,
    reportCompressedSize: false,
  },
  logLevel: "warn",
});
