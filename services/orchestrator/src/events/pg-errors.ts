// PostgreSQL errors reach us wrapped by Prisma's driver adapter: the SQLSTATE sits in
// meta.driverAdapterError.cause.originalCode (or .code), or directly on a pg error.

/** The SQLSTATE of a database error, or undefined when the error did not come from PostgreSQL. */
export function sqlStateOf(err: unknown): string | undefined {
  if (typeof err !== "object" || err === null) return undefined;
  const e = err as {
    code?: unknown;
    meta?: { driverAdapterError?: { cause?: { originalCode?: unknown; code?: unknown } } };
  };
  const cause = e.meta?.driverAdapterError?.cause;
  const code = cause?.originalCode ?? cause?.code ?? e.code;
  return typeof code === "string" && /^[0-9A-Z]{5}$/.test(code) ? code : undefined;
}

/**
 * True when the statement failed because of the data it carried (class 22 data exception,
 * class 23 integrity violation): retrying the same rows fails the same way. Anything else
 * (connection refused, database not accepting connections, timeouts, shutdown) may pass later.
 */
export function isDataError(err: unknown): boolean {
  const state = sqlStateOf(err);
  return state !== undefined && (state.startsWith("22") || state.startsWith("23"));
}
