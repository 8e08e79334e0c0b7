import type { Request, Response } from "express";
import type { Logger } from "@tog/core";
import { pingDb, type PingableDb } from "@tog/db";
import { pingRedis, type Redis } from "@tog/redis";

// The one readiness probe of the HTTP services (gateway, stream, session): every check runs in
// parallel under one deadline; the answer names each dependency "ok", "timed out after <n> ms"
// or "unavailable" (the error itself goes to the log only: it may name hosts and ports).

/** One dependency a service needs before it can serve traffic. */
export interface ReadinessCheck {
  name: string;
  check(timeoutMs: number): Promise<unknown>;
}

export interface ReadinessReport {
  ready: boolean;
  /** name → "ok", "timed out after <n> ms" or "unavailable". */
  checks: Record<string, string>;
  failed: string[];
  /** The errors behind the failures, for the log only: they may name hosts and ports. */
  errors: Record<string, unknown>;
}

class DeadlineError extends Error {}

export const postgresCheck = (db: PingableDb): ReadinessCheck => ({
  name: "postgres",
  check: () => pingDb(db),
});

export const redisCheck = (redis: Redis): ReadinessCheck => ({
  name: "redis",
  check: (timeoutMs) => pingRedis(redis, timeoutMs),
});

export const natsCheck = (bus: { ping(timeoutMs: number): Promise<unknown> }): ReadinessCheck => ({
  name: "nats",
  check: (timeoutMs) => bus.ping(timeoutMs),
});

/** A gRPC peer's `ping` (the client applies its own deadline too), e.g. the gateway's orchestrator. */
export const pingCheck = (name: string, peer: { ping(): Promise<unknown> }): ReadinessCheck => ({
  name,
  check: () => peer.ping(),
});

/** Runs every check in parallel; whatever has not answered by the deadline has failed. */
export async function runReadiness(checks: readonly ReadinessCheck[], timeoutMs: number): Promise<ReadinessReport> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new DeadlineError(`timed out after ${timeoutMs} ms`)), timeoutMs);
  });
  deadline.catch(() => undefined);
  try {
    const results = await Promise.allSettled(
      checks.map((c) => Promise.race([Promise.resolve().then(() => c.check(timeoutMs)), deadline])),
    );
    const report: ReadinessReport = { ready: true, checks: {}, failed: [], errors: {} };
    results.forEach((r, i) => {
      const name = checks[i]!.name;
      if (r.status === "fulfilled") {
        report.checks[name] = "ok";
      } else {
        report.ready = false;
        report.failed.push(name);
        // The public body says only how it failed; the error itself goes to the log.
        report.checks[name] = r.reason instanceof DeadlineError ? r.reason.message : "unavailable";
        report.errors[name] = r.reason;
      }
    });
    return report;
  } finally {
    clearTimeout(timer);
  }
}

export interface ReadinessHandlerOptions {
  checks: readonly ReadinessCheck[];
  timeoutMs: number;
  logger: Logger;
}

/**
 * GET /readiness: 200 `{"status":"ready","checks":{…}}`, or 503 `{"status":"not ready","error":"Not
 * ready: <names>","checks":{…}}` (the gateway's `Ready`/`NotReady` schemas of libs/api). Never cached.
 */
export function readinessHandler(options: ReadinessHandlerOptions): (req: Request, res: Response) => Promise<void> {
  const { checks, timeoutMs, logger } = options;
  return async (_req, res) => {
    const report = await runReadiness(checks, timeoutMs);
    res.setHeader("Cache-Control", "no-store");
    if (report.ready) {
      res.json({ status: "ready", checks: report.checks });
      return;
    }
    for (const [check, err] of Object.entries(report.errors)) logger.warn({ err, check }, "readiness check failed");
    res
      .status(503)
      .json({ status: "not ready", error: `Not ready: ${report.failed.join(", ")}`, checks: report.checks });
  };
}
