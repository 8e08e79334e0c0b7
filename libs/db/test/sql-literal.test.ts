import pg from "pg";
import { describe, expect, it } from "vitest";
import { sqlLiteral } from "../src/index.ts";
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
