import type { Request, Response, Router } from "express";
import type { z } from "zod";
import type { Logger } from "@tog/core";
import { mountRoute, type ApiDocs } from "@tog/edge";
import { readinessHandler, type ReadinessCheck } from "@tog/ops";
import { healthRoute, openApiRoute, PROBE_PREFIXES, readinessRoute, type HealthSchema } from "@tog/api";

export interface HealthRoutesOptions {
  docs: ApiDocs;
  logger: Logger;
  version: string;
  checks: readonly ReadinessCheck[];
  readinessTimeoutMs: number;
}

/**
 * Probes under /api/v1, without authentication (docs/api.md "Health"), the same two at the
 * server root (`/health`, `/readiness`), where most probes look (docs/decisions.md "Probes at
 * the root"), and the public document (libs/api).
 */
export function registerHealthRoutes(router: Router, options: HealthRoutesOptions): void {
  const { docs, logger, version, checks, readinessTimeoutMs } = options;

  const health = (_req: Request, res: Response) => {
    res.json({ status: "healthy", version, time: new Date().toISOString() } satisfies z.input<typeof HealthSchema>);
  };
  const readiness = readinessHandler({ checks, timeoutMs: readinessTimeoutMs, logger });

  for (const prefix of PROBE_PREFIXES) {
    mountRoute(router, healthRoute(prefix), health);
    mountRoute(router, readinessRoute(prefix), readiness);
  }
  mountRoute(router, openApiRoute, docs.handler());
}
