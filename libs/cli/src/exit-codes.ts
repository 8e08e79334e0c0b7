import { ApiError, ConnectionError, ForbiddenError, NotFoundError, UnauthorizedError } from "@tog/sdk";

/** Exit codes of `tog` (README "CLI"). */
export const EXIT = {
  OK: 0,
  /** The followed or awaited task ended FAILED or TIMEOUT. */
  TASK_FAILED: 1,
  /** Bad command line. */
  USAGE: 2,
  /** 404: no such task, session or approval. */
  NOT_FOUND: 3,
  /** 401/403: missing, wrong or insufficient credential. */
  AUTH: 4,
  /** Any other error answer of the server (400, 409, 429, 5xx). */
  API: 5,
  /** The server could not be reached. */
  CONNECTION: 6,
  /** The followed or awaited task ended CANCELLED. */
  TASK_CANCELLED: 7,
  /** Ctrl-C while following, task left running. */
  INTERRUPTED: 130,
} as const;

export function exitCodeOf(err: unknown): number {
  if (err instanceof NotFoundError) return EXIT.NOT_FOUND;
  if (err instanceof UnauthorizedError || err instanceof ForbiddenError) return EXIT.AUTH;
  if (err instanceof ApiError) return EXIT.API;
  if (err instanceof ConnectionError) return EXIT.CONNECTION;
  return EXIT.API;
}

export function exitCodeOfStatus(status: string): number {
  if (status.endsWith("COMPLETED")) return EXIT.OK;
  if (status.endsWith("CANCELLED")) return EXIT.TASK_CANCELLED;
  return EXIT.TASK_FAILED;
}
