import { AppError, isAppError } from "@tog/core";

/**
 * Runs an orchestrator call; an unexpected failure (not one of the named errors) becomes a 500
 * with the documented wording (`Failed to submit task: …`, docs/api.md "Errors") but no internals: the cause goes to
 * the log through the error mapper, the client reads `internal error`.
 */
export async function withFailureMessage<T>(what: string, run: () => Promise<T>): Promise<T> {
  try {
    return await run();
  } catch (err) {
    if (isAppError(err)) throw err;
    throw new AppError("INTERNAL", `${what}: internal error`, { cause: err });
  }
}
