import { describe, expect, it } from "vitest";
import { fails, ok } from "./helpers.ts";

const people = {
  people: [
    { name: "Ada", age: 36, langs: ["en", "fr"] },
    { name: "Linus", age: 28, langs: ["fi", "en"] },
    { name: "Grace", age: 85, langs: ["en"] },
  ],
};

describe("json", () => {
  it("parse accepts valid JSON and names its type", async () => {
    expect(await ok("json", { operation: "parse", text: '[1, {"a": null}]' })).toEqual({
      valid: true,
      type: "array",
      value: [1, { a: null }],
    });
    expect(await ok("json", { operation: "parse", text: '"x"' })).toMatchObject({ valid: true, type: "string" });
  });

  it.each([
    ['{"a": 1,}', "Property name expected", 1, 9, 8],
    ['{"a" 1}', "Colon expected", 1, 6, 5],
    ["[1, 2", "Close bracket expected", 1, 6, 5],
    ['{\n  "a": x\n}', "Invalid symbol", 2, 8, 9],
    ["{'a': 1}", "Invalid symbol", 1, 2, 1],
    ['{"a": 1} x', "Invalid symbol", 1, 10, 9],
    ['{"a": 1} 2', "End of file expected", 1, 10, 9],
    ["", "Value expected", 1, 1, 0],
    ['{"a": 1 /* c */}', "Invalid comment token", 1, 9, 8],
    // Columns and positions count code points, so the emoji counts once.
    ['{"é😀": tru}', "Invalid symbol", 1, 8, 7],
  ])("parse reports %j as %s at line %i column %i", async (text, message, line, column, position) => {
    const data = await ok("json", { operation: "parse", text });
    expect(data).toEqual({
      valid: false,
      error: `${message} at line ${line}, column ${column}`,
      position,
      line,
      column,
    });
  });

  it("format pretty-prints, minifies and sorts keys", async () => {
    const text = '{"b": 1, "a": {"d": [1, 2], "c": true}}';
    expect((await ok("json", { operation: "format", text, indent: 0 })).formatted).toBe(
      '{"b":1,"a":{"d":[1,2],"c":true}}',
    );
    expect((await ok("json", { operation: "format", text, indent: 0, sort_keys: true })).formatted).toBe(
      '{"a":{"c":true,"d":[1,2]},"b":1}',
    );
    expect((await ok("json", { operation: "format", value: { a: [1] } })).formatted).toBe('{\n  "a": [\n    1\n  ]\n}');
  });

  it("format and query refuse invalid JSON text with its position", async () => {
    const failure = await fails("json", { operation: "format", text: '{"a": }' });
    expect(failure.errorType).toBe("INVALID_INPUT");
    expect(failure.error.message).toBe("text is not valid JSON: Value expected at line 1, column 7");
  });

  it.each([
    ["people[?age > `30`].name", ["Ada", "Grace"]],
    ["people[0].langs[-1]", "fr"],
    ["length(people)", 3],
    ["sort_by(people, &age)[*].name", ["Linus", "Ada", "Grace"]],
    ["max_by(people, &age).name", "Grace"],
    ["people[?contains(langs, 'fi')] | [0].name", "Linus"],
    ["{names: people[*].name, total: sum(people[*].age)}", { names: ["Ada", "Linus", "Grace"], total: 149 }],
    ["missing.field", null],
  ])("query %s", async (expression, expected) => {
    expect(await ok("json", { operation: "query", value: people, expression })).toEqual({ result: expected });
    expect(await ok("json", { operation: "query", text: JSON.stringify(people), expression })).toEqual({
      result: expected,
    });
  });

  it("query reports a bad expression and ambiguous input", async () => {
    const bad = await fails("json", { operation: "query", value: people, expression: "people[?" });
    expect(bad.errorType).toBe("INVALID_INPUT");
    expect(bad.error.message).toMatch(/^expression: /);
    const both = await fails("json", { operation: "query", value: {}, text: "{}", expression: "a" });
    expect(both.error.message).toContain("text: Give exactly one of text or value");
    const none = await fails("json", { operation: "query", value: {} });
    expect(none.error.message).toContain('expression: Required for operation "query"');
  });

  it("diff lists JSON Patch style changes with JSON Pointer paths", async () => {
    const data = await ok("json", {
      operation: "diff",
      left: { a: 1, list: [1, 2, 3], nested: { "x/y": 1, keep: true } },
      right: { a: 2, list: [1], nested: { keep: true }, added: "new" },
    });
    expect(data).toEqual({
      equal: false,
      changes: [
        { op: "replace", path: "/a", value: 2, old_value: 1 },
        { op: "remove", path: "/list/2", old_value: 3 },
        { op: "remove", path: "/list/1", old_value: 2 },
        { op: "remove", path: "/nested/x~1y", old_value: 1 },
        { op: "add", path: "/added", value: "new" },
      ],
    });
    expect(await ok("json", { operation: "diff", left: { a: [1] }, right: { a: [1] } })).toEqual({
      equal: true,
      changes: [],
    });
    expect((await ok("json", { operation: "diff", left: 1, right: "1" })).changes).toEqual([
      { op: "replace", path: "", value: "1", old_value: 1 },
    ]);
  });

  it("refuses values that are not JSON", async () => {
    const failure = await fails("json", { operation: "format", value: { when: new Date(0) } });
    expect(failure.error.message).toContain("value: Must be a JSON value");
  });
});
