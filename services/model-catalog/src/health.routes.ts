import { Router } from "express";

/** Liveness: the catalog is loaded before the server listens, so answering is enough. */
export function createHealthRouter(): Router {
  const router = Router();
  router.get("/health", (_req, res) => {
    res.status(200).json({ status: "ok" });
  });
  return router;
}
