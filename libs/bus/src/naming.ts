import { ConfigError, ValidationError } from "@tog/core";
import { NATS_PREFIX_PATTERN } from "./config.ts";

// One subject token: no dots (they separate tokens), no whitespace. `*` and `>` pass so
// callers can build filters with the same helper.
const TOKEN = /^[^\s.]+$/;
const STREAM_BASE = /^[A-Za-z0-9_-]+$/;

export function assertPrefix(prefix: string): void {
  if (!NATS_PREFIX_PATTERN.test(prefix)) {
    throw new ConfigError(`NATS prefix "${prefix}" is invalid: it must match [a-z0-9_-]+`);
  }
}

/** `<prefix>.<part>.<part>…`; every part must be one subject token. */
export function subjectFor(prefix: string, parts: readonly string[]): string {
  for (const part of parts) {
    if (!TOKEN.test(part)) throw new ValidationError(`Invalid subject token: ${JSON.stringify(part)}`);
  }
  return parts.length === 0 ? prefix : `${prefix}.${parts.join(".")}`;
}

/** `<PREFIX>_<BASE>`, upper-case. */
export function streamNameFor(prefix: string, base: string): string {
  if (!STREAM_BASE.test(base)) throw new ConfigError(`Invalid stream base name: ${JSON.stringify(base)}`);
  return `${prefix}_${base}`.toUpperCase();
}
