import type { Db } from "@tog/db";
import { pingRedis, type Redis } from "@tog/redis";
import type { Bus } from "@tog/bus";
import type { TaskOrchestrator } from "@tog/proto";

/** One dependency the gateway needs before it can serve traffic. */
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

export const postgresCheck = (db: Db): ReadinessCheck => ({
  name: "postgres",
  check: () => db.$queryRaw`SELECT 1`,
});

export const redisCheck = (redis: Redis): ReadinessCheck => ({
  name: "redis",
  check: (timeoutMs) => pingRedis(redis, timeoutMs),
});

export const natsCheck = (bus: Pick<Bus, "ping">): ReadinessCheck => ({
  name: "nats",
  check: (timeoutMs) => bus.ping(timeoutMs),
});

/** The contract's readiness "checks the orchestrator": its `ping` (the client applies its own deadline too). */
export const orchestratorCheck = (orchestrator: Pick<TaskOrchestrator, "ping">): ReadinessCheck => ({
  name: "orchestrator",
  check: () => orchestrator.ping(),
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
