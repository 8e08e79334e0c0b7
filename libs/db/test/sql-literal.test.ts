import pg from "pg";
import { describe, expect, it } from "vitest";
import { createRequire } from "node:module";
import { sqlArray, sqlLiteral } from "../src/index.ts";
import { testDatabaseClient } from "./test-client.ts";

// sqlLiteral replaces pg's escapeLiteral on the submit's hot path (src/sql-literal.ts): it must
// give the same literal, and PostgreSQL must read every literal back as the text it came from.
const texts = [
  "",
  "plain",
  "it's",
  "''",
  "back\\slash",
  "\\",
  "'\\'",
  'JSON {"q":"say \\"hi\\"\\n","n":null}',
  "unicode ✓ — 日本語 😀",
  "tab\tnew\nline\r",
  JSON.stringify([{ id: "a'b", query: "C:\\path\\to 'x'", spec: { context: { note: "\\u0000 and \u0001" } } }]),
];
// Random texts over the characters that matter, to cover their mixes.
const alphabet = ["'", "\\", "a", " ", "E", '"', "\n", "é"];
let seed = 7;
const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
for (let i = 0; i < 200; i++)
  texts.push(Array.from({ length: Math.floor(random() * 12) }, () => alphabet[Math.floor(random() * 8)]).join(""));

describe("sqlLiteral", () => {
  const db = testDatabaseClient();

  it("gives pg's escapeLiteral's literal for every text", () => {
    for (const text of texts) expect(sqlLiteral(text)).toBe(pg.escapeLiteral(text));
  });

  it("is read back by PostgreSQL as the same text, also as jsonb", async () => {
    const { rows } = await db.client.query<{ t: string }>(
      `SELECT t FROM (VALUES ${texts.map((t, i) => `(${i}, ${sqlLiteral(t)})`).join(", ")}) AS v(i, t) ORDER BY i`,
    );
    expect(rows.map((r) => r.t)).toEqual(texts);
    const json = JSON.stringify(texts);
    const res = await db.client.query<{ same: boolean }>(`SELECT ${sqlLiteral(json)}::jsonb = $1::jsonb AS same`, [
      json,
    ]);
    expect(res.rows[0]!.same).toBe(true);
  });
});

// sqlArray replaces pg's serialization of a JS array parameter on the run's batch statements.
describe("sqlArray", () => {
  const db = testDatabaseClient();
  // pg's own serialization of a parameter (untyped internals, loaded as CommonJS).
  const { prepareValue } = createRequire(import.meta.url)("pg/lib/utils.js") as {
    prepareValue: (v: unknown) => unknown;
  };

  it("gives pg's array literal for strings, numbers, booleans and nulls", () => {
    const mixed = [...texts, 0, -1.5, 42, 12345678901234567890n, true, false, null, undefined];
    expect(sqlArray(mixed)).toBe(prepareValue(mixed));
    expect(sqlArray([])).toBe(prepareValue([]));
    for (const text of texts) expect(sqlArray([text, null])).toBe(prepareValue([text, null]));
  });

  it("is read back by PostgreSQL as the same array, as text[], int[] and uuid[]", async () => {
    const withNulls = [...texts, null, "NULL", ""];
    const text = await db.client.query<{ a: (string | null)[] }>("SELECT $1::text[] AS a", [sqlArray(withNulls)]);
    expect(text.rows[0]!.a).toEqual(withNulls);
    const ints = await db.client.query<{ a: (number | null)[] }>("SELECT $1::int[] AS a", [sqlArray([1, -2, null, 3])]);
    expect(ints.rows[0]!.a).toEqual([1, -2, null, 3]);
    const id = "0b7e1a52-7d0c-4d1c-9a53-8c1b8a0f3e11";
    const ids = await db.client.query<{ a: string }>("SELECT ($1::uuid[])[1]::text AS a", [sqlArray([id])]);
    expect(ids.rows[0]!.a).toBe(id);
  });

  it("refuses an element it would have to guess at", () => {
    expect(() => sqlArray([new Date()])).toThrow(TypeError);
    expect(() => sqlArray([{ a: 1 }])).toThrow(TypeError);
    expect(() => sqlArray([["nested"]])).toThrow(TypeError);
  });
});
