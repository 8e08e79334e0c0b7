import { z } from "zod";

// Query parameters as every list route reads them (docs/api.md "Requests"): integers are digits
// only, an empty value (`?limit=`) is the same as leaving the parameter out, and every rule
// carries its exact 400 text.

/** int32: the largest offset any list accepts (and the orchestrator's wire type). */
export const MAX_OFFSET = 2_147_483_647;

export const emptyToUndefined = (v: unknown) => (v === "" ? undefined : v);

function integerSchema(name: string, min: number, max: number) {
  const message = `Invalid ${name} parameter: must be an integer from ${min} to ${max}`;
  return z.int({ error: message }).min(min, message).max(max, message);
}

/** Digits only (no sign, exponent or spaces); anything else is left for the schema to refuse. */
function toInteger(value: unknown): unknown {
  return typeof value === "string" && /^\d{1,16}$/.test(value) ? Number(value) : value;
}

/** An integer query parameter in [min, max]; absent or empty → `fallback`. */
export function integerParam(name: string, min: number, max: number, fallback: number) {
  return z.preprocess((v) => (v === undefined || v === "" ? fallback : toInteger(v)), integerSchema(name, min, max));
}

/** An optional integer query parameter in [min, max]; empty is absent. */
export function optionalIntegerParam(name: string, min: number, max: number) {
  return z.preprocess((v) => toInteger(emptyToUndefined(v)), integerSchema(name, min, max).optional());
}

/** `true`/`false`/`1`/`0` in any case as a boolean; anything else is left for the schema to refuse. */
export function booleanWord(value: unknown): unknown {
  if (typeof value !== "string") return value;
  return ({ true: true, false: false, "1": true, "0": false } as Record<string, boolean>)[value.toLowerCase()] ?? value;
}
