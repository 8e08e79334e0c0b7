import path from "node:path";
import express, { Router } from "express";

export interface ConsoleRoutesOptions {
  /** The built page (index.html, assets/). */
  webDir: string;
  /** What the page calls: CONSOLE_API_BASE_URL. */
  apiBaseUrl: string;
}

export const CONSOLE_PREFIX = "/console";
const IMMUTABLE = "public, max-age=31536000, immutable";

/**
 * GET /console/…: the page's files, `config.json`, and index.html for every other path under
 * /console (the page routes on the client: /console/tasks/<id> reloads into the same page).
 * Hashed build files are immutable; index.html and config.json are always revalidated, so a
 * new deployment is picked up at the next load.
 */
export function createConsoleRouter(options: ConsoleRoutesOptions): Router {
  const { webDir, apiBaseUrl } = options;
  const indexFile = path.join(webDir, "index.html");
  const configBody = JSON.stringify({ api_base_url: apiBaseUrl });
  const router = Router();

  router.get(CONSOLE_PREFIX, (req, res, next) => {
    // Express ignores a trailing slash when matching: /console/ is the page, not this redirect.
    if (req.path !== CONSOLE_PREFIX) return next();
    const q = req.originalUrl.indexOf("?");
    res.redirect(308, `${CONSOLE_PREFIX}/${q < 0 ? "" : req.originalUrl.slice(q)}`);
  });
  router.get(`${CONSOLE_PREFIX}/config.json`, (_req, res) => {
    res.setHeader("Cache-Control", "no-store");
    res.type("application/json").send(configBody);
  });
  // A missing build file is a 404, never the page (a script answered with HTML breaks loudly).
  router.use(
    `${CONSOLE_PREFIX}/assets`,
    // Set explicitly: the edge's `Cache-Control: no-store` (docs/security.md) would otherwise win,
    // since serve-static never replaces a Cache-Control that is already set.
    express.static(path.join(webDir, "assets"), {
      index: false,
      fallthrough: true,
      redirect: false,
      setHeaders: (res) => res.setHeader("Cache-Control", IMMUTABLE),
    }),
    (_req, res) => {
      res.status(404).json({ error: "Not found" });
    },
  );
  router.use(
    CONSOLE_PREFIX,
    express.static(webDir, {
      index: false,
      redirect: false,
      setHeaders: (res) => res.setHeader("Cache-Control", "no-cache"),
    }),
  );
  router.get(`${CONSOLE_PREFIX}/{*rest}`, (_req, res) => {
    res.setHeader("Cache-Control", "no-cache");
    res.sendFile(indexFile);
  });
  return router;
}
