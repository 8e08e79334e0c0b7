import type { RequestHandler } from "express";

// Load shedding at the door (docs/reliability.md "Overload"): a request beyond what this process
// can work on is answered 503 + Retry-After at once, before authentication, rate limits or any
// I/O. Without it, every shed request still took the whole path (Redis, the orchestrator, a
// PostgreSQL transaction) to learn that the queue was full; on a CPU-starved machine those
// requests piled up until clients gave up waiting.

export interface LoadShedderOptions {
  /** Requests worked on at once; beyond: 503. 0: no bound. */
  maxInFlight: number;
  /**
   * Event-loop delay (ms) above which new requests are shed: the process no longer gets the CPU
   * to answer what it holds in time. 0: not measured.
   */
  maxEventLoopDelayMs: number;
  /** Paths never shed (probes): a live process that sheds load is not unhealthy. */
  exempt?: (path: string) => boolean;
  /** Seconds a shed client is told to wait (Retry-After). */
  retryAfterSeconds?: number;
  /** Called per shed request (a metrics counter). */
  onShed?: (reason: ShedReason) => void;
}

export type ShedReason = "in_flight" | "event_loop_delay";

export interface LoadShedder {
  middleware: RequestHandler;
  /** Requests in flight now (for tests and metrics). */
  readonly inFlight: number;
  /** Requests shed since start, by reason. */
  readonly shed: { inFlight: number; eventLoopDelay: number };
  stop(): void;
}

/** The delay is sampled this often; the decision follows the worst sample of the last window. */
const DELAY_SAMPLE_MS = 50;
const DELAY_WINDOW_MS = 500;

export function createLoadShedder(options: LoadShedderOptions): LoadShedder {
  const retryAfter = String(options.retryAfterSeconds ?? 1);
  const body = JSON.stringify({ error: "System overloaded" });
  const shed = { inFlight: 0, eventLoopDelay: 0 };
  let inFlight = 0;
  let delayed = false;
  let timer: NodeJS.Timeout | undefined;
  if (options.maxEventLoopDelayMs > 0) {
    // A timer's lateness is the delay: it includes the time the process was not scheduled at all.
    let last = performance.now();
    let worst = 0;
    let windowStart = last;
    timer = setInterval(() => {
      const now = performance.now();
      worst = Math.max(worst, now - last - DELAY_SAMPLE_MS);
      last = now;
      if (now - windowStart >= DELAY_WINDOW_MS) {
        delayed = worst > options.maxEventLoopDelayMs;
        worst = 0;
        windowStart = now;
      }
    }, DELAY_SAMPLE_MS);
    timer.unref();
  }

  const refuse = (res: Parameters<RequestHandler>[1], reason: ShedReason) => {
    options.onShed?.(reason);
    res.setHeader("Retry-After", retryAfter);
    res.setHeader("Content-Type", "application/json; charset=utf-8");
    res.setHeader("Cache-Control", "no-store");
    res.status(503).end(body);
  };

  const middleware: RequestHandler = (req, res, next) => {
    if (options.exempt?.(req.path)) {
      next();
      return;
    }
    if (options.maxInFlight > 0 && inFlight >= options.maxInFlight) {
      shed.inFlight++;
      refuse(res, "in_flight");
      return;
    }
    if (delayed) {
      shed.eventLoopDelay++;
      refuse(res, "event_loop_delay");
      return;
    }
    inFlight++;
    res.once("close", () => {
      inFlight--;
    });
    next();
  };

  return {
    middleware,
    get inFlight() {
      return inFlight;
    },
    shed,
    stop() {
      if (timer) clearInterval(timer);
    },
  };
}
