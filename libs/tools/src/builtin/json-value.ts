import { z } from "zod";
import type { JsonValue } from "../tool.ts";

const MAX_DEPTH = 200;

/** Plain JSON data (what JSON.parse can return), at most MAX_DEPTH levels deep. */
export function isJsonValue(value: unknown, depth = 0): value is JsonValue {
  if (depth > MAX_DEPTH) return false;
  if (value === null || typeof value === "string" || typeof value === "boolean") return true;
  if (typeof value === "number") return Number.isFinite(value);
  if (Array.isArray(value)) return value.every((item) => isJsonValue(item, depth + 1));
  if (typeof value === "object") {
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null) return false;
    return Object.values(value).every((item) => isJsonValue(item, depth + 1));
  }
  return false;
}

/**
 * Any JSON value. Declared as `unknown` plus a check rather than zod's recursive `z.json()`, so
 * its JSON Schema is a plain `{}` instead of a `$ref` cycle some providers cannot read.
 */
export const jsonValue = () =>
  z.unknown().refine((value) => isJsonValue(value), { message: "Must be a JSON value" }) as unknown as z.ZodType<
    JsonValue,
    unknown
  >;

/** Number of Unicode code points (not UTF-16 units) in a string. */
export function codePointLength(text: string): number {
  let count = 0;
  for (const _ of text) count++;
  return count;
}
