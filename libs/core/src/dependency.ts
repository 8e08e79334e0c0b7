import type { Logger } from "pino";

// At start a service waits for each dependency (PostgreSQL, Redis, NATS) instead of dying with
// a stack: it names the dependency, its URL (password removed) and the variable that sets it,
// and retries with exponential backoff (0.5 s doubling up to 5 s) for DEPENDENCY_WAIT_SECONDS.
// Decision and timings: docs/decisions.md ("Unreachable dependencies at start").

export interface Dependency {
  /** Human name: "PostgreSQL", "Redis", "NATS". */
  name: string;
  /** Configured URL; logged without its password. */
  url: string;
  /** The environment variable the URL comes from. */
  variable: string;
}

export interface WaitForDependencyOptions {
  logger: Logger;
  /** Total time to keep retrying; 0 tries once. */
  timeoutMs: number;
  /** First wait (default 500 ms); doubled after each failure up to `maxDelayMs` (default 5 s). */
  initialDelayMs?: number;
  maxDelayMs?: number;
  /** Deadline of one attempt (default 5 s), so a silent host does not hang the start. */
  attemptTimeoutMs?: number;
}

/** The dependency stayed unreachable for the whole wait. Its message is the one line to show. */
export class DependencyUnavailableError extends Error {
  override name = "DependencyUnavailableError";
  readonly dependency: Dependency;
  constructor(dependency: Dependency, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.dependency = dependency;
  }
}

/** `scheme://user:secret@host/db` → `scheme://user@host/db`; several comma-separated URLs each. */
export function redactUrl(url: string): string {
  return url
    .split(",")
    .map((part) =>
      part.trim().replace(/^([a-z][a-z0-9+.-]*:\/\/)([^@/]*)@/i, (_, scheme: string, auth: string) => {
        const user = auth.split(":")[0] ?? "";
        return user ? `${scheme}${user}@` : scheme;
      }),
    )
    .join(",");
}

function reason(err: unknown): string {
  const e = err as { message?: string; code?: string; cause?: unknown } | undefined;
  const own = oneLine(e?.message || e?.code || String(err));
  // Wrapped errors (UpstreamUnavailableError, Prisma adapters) hide the socket error in `cause`.
  const inner = e?.cause as { message?: string; code?: string } | undefined;
  const innerText = inner?.message || inner?.code;
  return innerText && !own.includes(oneLine(innerText)) ? `${own}: ${oneLine(innerText)}` : own;
}

// Prisma's messages span several lines ("Invalid `prisma.$queryRaw()` invocation: … Message: `…`");
// the last line, and in it the quoted message, is the part worth one log line.
function oneLine(text: string): string {
  const last =
    text
      .split("\n")
      .map((l) => l.trim())
      .filter(Boolean)
      .pop() ?? text;
  return /Message: `(.+)`$/.exec(last)?.[1] ?? last;
}

function withDeadline<T>(work: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

/**
 * Runs `attempt` until it succeeds or `timeoutMs` has passed, logging one warning per failure.
 * Resolves with the attempt's result; rejects with DependencyUnavailableError.
 */
export async function waitForDependency<T>(
  dependency: Dependency,
  attempt: () => Promise<T>,
  options: WaitForDependencyOptions,
): Promise<T> {
  const { logger, timeoutMs } = options;
  const url = redactUrl(dependency.url);
  const maxDelay = options.maxDelayMs ?? 5_000;
  const attemptTimeout = options.attemptTimeoutMs ?? 5_000;
  const started = Date.now();
  let delay = options.initialDelayMs ?? 500;
  for (let n = 1; ; n++) {
    try {
      const result = await withDeadline(attempt(), attemptTimeout);
      if (n > 1)
        logger.info({ dependency: dependency.name, url, attempts: n }, `${dependency.name} reachable at ${url}`);
      return result;
    } catch (err) {
      const why = reason(err);
      const waited = Date.now() - started;
      if (waited + delay > timeoutMs) {
        const seconds = Number((timeoutMs / 1000).toFixed(1));
        throw new DependencyUnavailableError(
          dependency,
          `${dependency.name} unreachable at ${url} (set by ${dependency.variable}) for ${seconds} s: ${why}`,
          { cause: err },
        );
      }
      logger.warn(
        { dependency: dependency.name, url, variable: dependency.variable, attempt: n, retry_in_ms: delay },
        `${dependency.name} unreachable at ${url} (set by ${dependency.variable}): ${why}; retrying in ${(delay / 1000).toFixed(1)} s`,
      );
      await new Promise((r) => setTimeout(r, delay));
      delay = Math.min(delay * 2, maxDelay);
    }
  }
}

/**
 * The one fatal log line of a failed start: for a DependencyUnavailableError its message (no
 * stack - the cause is already named) and the dependency's fields; otherwise the error itself.
 * Use: `logger.fatal(startFailureFields(err), startFailureMessage(err, "gateway failed to start"))`.
 */
export function startFailureFields(err: unknown): Record<string, unknown> {
  if (err instanceof DependencyUnavailableError) {
    return { dependency: err.dependency.name, variable: err.dependency.variable, url: redactUrl(err.dependency.url) };
  }
  return { err };
}

export function startFailureMessage(err: unknown, what: string): string {
  return err instanceof DependencyUnavailableError ? `${what}: ${err.message}` : what;
}
