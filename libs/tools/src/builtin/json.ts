import { search } from "@jmespath-community/jmespath";
import { parse as parseLenient, printParseErrorCode, type ParseError } from "jsonc-parser";
import { z } from "zod";
import { ValidationError } from "@tog/core";
import { defineTool, type JsonValue, type ToolResult } from "../tool.ts";
import { codePointLength, isJsonValue, jsonValue } from "./json-value.ts";

// Queries use JMESPath (community edition): a pure interpreter with no eval, unlike several
// JSONPath libraries whose filter expressions run JavaScript. Error positions come from
// jsonc-parser (VS Code's parser), because V8's JSON.parse message omits the position for an
// unexpected token.

const MAX_TEXT = 1_000_000;
const MAX_CHANGES = 1_000;

const parameters = z
  .object({
    operation: z
      .enum(["parse", "format", "query", "diff"])
      .describe(
        "parse: check JSON text and report the error position; format: pretty-print or minify; query: JMESPath query; diff: changes from left to right",
      ),
    text: z.string().max(MAX_TEXT).optional().describe("parse, format, query: the JSON text (or give value)"),
    value: jsonValue().optional().describe("format, query: the JSON value itself instead of text"),
    indent: z.number().int().min(0).max(8).default(2).describe("format: spaces per level; 0 minifies (default 2)"),
    sort_keys: z.boolean().default(false).describe("format: sort object keys recursively (default false)"),
    expression: z
      .string()
      .min(1)
      .max(1_000)
      .optional()
      .describe('query: JMESPath expression, e.g. "people[?age > `30`].name"'),
    left: jsonValue().optional().describe("diff: the original JSON value"),
    right: jsonValue().optional().describe("diff: the changed JSON value"),
  })
  .strict()
  .superRefine((args, ctx) => {
    const need = (field: "text" | "expression" | "left" | "right") => {
      if (!(field in args) || args[field] === undefined) {
        ctx.addIssue({ code: "custom", path: [field], message: `Required for operation "${args.operation}"` });
      }
    };
    if (args.operation === "parse") need("text");
    if (args.operation === "format" || args.operation === "query") {
      if ((args.text === undefined) === (args.value === undefined)) {
        ctx.addIssue({ code: "custom", path: ["text"], message: "Give exactly one of text or value" });
      }
    }
    if (args.operation === "query") need("expression");
    if (args.operation === "diff") need("left"), need("right");
  });

type Args = z.output<typeof parameters>;

export interface JsonSyntaxProblem {
  message: string;
  /** 0-based offset in Unicode code points. */
  position: number | null;
  line: number | null;
  column: number | null;
}

/** Where and why `text` is not JSON, or null when it is. */
export function findJsonError(text: string): JsonSyntaxProblem | null {
  try {
    JSON.parse(text);
    return null;
  } catch (cause) {
    const errors: ParseError[] = [];
    parseLenient(text, errors, { disallowComments: true, allowTrailingComma: false, allowEmptyContent: false });
    const first = errors[0];
    const v8Position = /at position (\d+)/.exec((cause as Error).message)?.[1];
    const offset = first?.offset ?? (v8Position === undefined ? undefined : Number(v8Position));
    if (offset === undefined) return { message: (cause as Error).message, position: null, line: null, column: null };
    const before = text.slice(0, offset);
    const lineStart = before.lastIndexOf("\n") + 1;
    const line = before.split("\n").length;
    const column = codePointLength(before.slice(lineStart)) + 1;
    const reason = first ? humanize(printParseErrorCode(first.error)) : (cause as Error).message;
    return { message: `${reason} at line ${line}, column ${column}`, position: codePointLength(before), line, column };
  }
}

function humanize(code: string): string {
  const words = code.replace(/([a-z])([A-Z])/g, "$1 $2").toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
}

function readJson(args: Args): JsonValue {
  if (args.value !== undefined) return args.value;
  const text = args.text ?? "";
  const problem = findJsonError(text);
  if (problem) throw new ValidationError(`text is not valid JSON: ${problem.message}`);
  return JSON.parse(text) as JsonValue;
}

function typeName(value: JsonValue): string {
  if (value === null) return "null";
  return Array.isArray(value) ? "array" : typeof value;
}

function sortKeys(value: JsonValue): JsonValue {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === "object") {
    return Object.fromEntries(
      Object.keys(value)
        .sort()
        .map((key) => [key, sortKeys(value[key] as JsonValue)]),
    );
  }
  return value;
}

export interface JsonChange {
  op: "add" | "remove" | "replace";
  /** RFC 6901 JSON Pointer. */
  path: string;
  value?: JsonValue;
  old_value?: JsonValue;
}

const pointer = (base: string, key: string | number) =>
  `${base}/${String(key).replaceAll("~", "~0").replaceAll("/", "~1")}`;

/** Changes that turn `left` into `right`, in JSON Patch terms (arrays compared by index). */
export function diffJson(left: JsonValue, right: JsonValue, path = "", out: JsonChange[] = []): JsonChange[] {
  if (out.length >= MAX_CHANGES) return out;
  const bothArrays = Array.isArray(left) && Array.isArray(right);
  const bothObjects =
    left !== null &&
    right !== null &&
    typeof left === "object" &&
    typeof right === "object" &&
    !Array.isArray(left) &&
    !Array.isArray(right);
  if (bothArrays) {
    const shared = Math.min(left.length, right.length);
    for (let i = 0; i < shared; i++) diffJson(left[i] as JsonValue, right[i] as JsonValue, pointer(path, i), out);
    for (let i = shared; i < right.length; i++)
      out.push({ op: "add", path: pointer(path, i), value: right[i] as JsonValue });
    for (let i = left.length - 1; i >= shared; i--)
      out.push({ op: "remove", path: pointer(path, i), old_value: left[i] as JsonValue });
  } else if (bothObjects) {
    for (const key of Object.keys(left)) {
      if (!Object.hasOwn(right, key))
        out.push({ op: "remove", path: pointer(path, key), old_value: left[key] as JsonValue });
      else diffJson(left[key] as JsonValue, right[key] as JsonValue, pointer(path, key), out);
    }
    for (const key of Object.keys(right)) {
      if (!Object.hasOwn(left, key)) out.push({ op: "add", path: pointer(path, key), value: right[key] as JsonValue });
    }
  } else if (left !== right) {
    out.push({ op: "replace", path, value: right, old_value: left });
  }
  return out.slice(0, MAX_CHANGES);
}

function run(args: Args): ToolResult {
  switch (args.operation) {
    case "parse": {
      const text = args.text ?? "";
      const problem = findJsonError(text);
      if (problem) {
        return {
          data: {
            valid: false,
            error: problem.message,
            position: problem.position,
            line: problem.line,
            column: problem.column,
          },
          text: `Invalid JSON: ${problem.message}`,
        };
      }
      const value = JSON.parse(text) as JsonValue;
      return { data: { valid: true, type: typeName(value), value }, text: `Valid JSON (${typeName(value)})` };
    }
    case "format": {
      const value = readJson(args);
      const formatted = JSON.stringify(
        args.sort_keys ? sortKeys(value) : value,
        null,
        args.indent === 0 ? undefined : args.indent,
      );
      return { data: { formatted }, text: formatted };
    }
    case "query": {
      const value = readJson(args);
      let result: unknown;
      try {
        result = search(value, args.expression ?? "");
      } catch (cause) {
        throw new ValidationError(`expression: ${(cause as Error).message}`, { cause });
      }
      const data = isJsonValue(result) ? result : null;
      return { data: { result: data }, text: JSON.stringify(data) };
    }
    case "diff": {
      const changes = diffJson(args.left ?? null, args.right ?? null);
      const text =
        changes.length === 0
          ? "No differences"
          : changes.map((c) => `${c.op} ${c.path === "" ? "/" : c.path}`).join("\n");
      return { data: { equal: changes.length === 0, changes: changes as unknown as JsonValue }, text };
    }
  }
}

export const jsonTool = defineTool({
  name: "json",
  description:
    "JSON utilities: parse (check JSON text, report the error's line and column), format (pretty-print, minify, sort keys), " +
    'query (JMESPath, e.g. "items[?price > `10`].name | sort(@)") and diff (JSON Patch style changes from left to right).',
  parameters,
  riskLevel: "low",
  timeoutSeconds: 5,
  async execute(args) {
    return run(args);
  },
});
