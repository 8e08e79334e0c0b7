import { Router } from "express";

/** Liveness at the root (probes, `npm start`) and under /console (reachable through the Ingress). */
export function createHealthRouter(version: string): Router {
  const router = Router();
  for (const p of ["/health", "/console/health"]) {
    router.get(p, (_req, res) => {
      res.setHeader("Cache-Control", "no-store");
      res.json({ status: "healthy", version, time: new Date().toISOString() });
    });
  }
  return router;
}
