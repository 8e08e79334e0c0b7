import type { ToolSpec } from "./provider.ts";
import type { ToolIntent } from "./offline.intents.ts";

// The offline provider emits its documented argument names (calculator {expression},
// datetime {operation, start, end, timezone}, json {operation, text}, workspace_write {key, value,
// action}). A built-in tool whose
// JSON schema names them differently still gets a valid call: each argument is renamed to
// the first alias the schema declares (undeclared ones are dropped), and an `operation` value
// to the first enum value that contains one of its aliases.

const KEY_ALIASES: Record<string, readonly string[]> = {
  expression: ["expression", "expr", "input", "query", "formula"],
  operation: ["operation", "action", "op", "mode", "command"],
  start: ["start", "from", "start_date", "date1", "date", "a"],
  end: ["end", "to", "end_date", "date2", "b"],
  timezone: ["timezone", "tz", "time_zone", "zone"],
  text: ["text", "input", "json", "data", "value", "content"],
};

const OPERATION_ALIASES: Record<string, readonly string[]> = {
  now: ["now", "current", "today"],
  days_between: ["days_between", "between", "diff", "difference", "duration"],
  format: ["format", "pretty", "prettify", "stringify"],
  parse: ["parse", "validate"],
  minify: ["minify", "compact", "format"],
};

interface JsonSchemaLike {
  properties?: Record<string, { type?: unknown; enum?: unknown[] }>;
}

export function toolArguments(intent: ToolIntent, tool: ToolSpec | undefined): Record<string, unknown> {
  const { tool: _name, ...args } = intent;
  const properties = (tool?.parameters as JsonSchemaLike | undefined)?.properties;
  if (!properties || Object.keys(properties).length === 0) return args;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(args)) {
    const target = (KEY_ALIASES[key] ?? [key]).find((alias) => alias in properties && !(alias in out));
    // Strict schemas (additionalProperties: false) refuse undeclared keys, so those are left out.
    if (target === undefined) continue;
    out[target] = key === "operation" ? fitEnum(String(value), properties[target]?.enum) : value;
  }
  // Refinements a richer schema allows: "days between" in days only; minify as format with indent 0.
  if (intent.tool === "datetime" && intent.operation === "days_between" && "units" in properties) out.units = ["days"];
  if (intent.tool === "json" && intent.operation === "minify" && out.operation !== "minify" && "indent" in properties)
    out.indent = 0;
  return out;
}

function fitEnum(value: string, allowed: unknown[] | undefined): string {
  if (!allowed || allowed.includes(value)) return value;
  const names = allowed.filter((v): v is string => typeof v === "string");
  for (const alias of OPERATION_ALIASES[value] ?? [value]) {
    const hit = names.find((n) => n.toLowerCase().includes(alias));
    if (hit !== undefined) return hit;
  }
  return value;
}
