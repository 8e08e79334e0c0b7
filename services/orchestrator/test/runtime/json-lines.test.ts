import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { testInfraConfig } from "@tog/testkit";
import { jsonLines, linesArray } from "../../src/runtime/json-lines.ts";

// The JSON columns of checkpoints, final writes and logged live events travel as one text of lines
// (json-lines.ts); PostgreSQL must get back exactly the texts, NULLs and count that were sent.

describe("JSON texts as lines", () => {
  let client: pg.Client;
  beforeAll(async () => {
    client = new pg.Client({ connectionString: testInfraConfig.TEST_DATABASE_ADMIN_URL });
    await client.connect();
  });
  afterAll(async () => client?.end());

  const roundTrip = async (texts: (string | null)[]): Promise<(string | null)[]> => {
    const res = await client.query<{ a: (string | null)[] }>(`SELECT ${linesArray("$1")} AS a`, [jsonLines(texts)]);
    return res.rows[0]!.a;
  };

  it("gives back each text as sent, however much JSON escapes in it", async () => {
    const texts = [
      { text: 'a "quoted" line\nand a second\r\nline', path: "C:\\dir\\file" },
      { type: "LLM_PARTIAL", data: { chunk: "\u2028\u2029 tab\t nul\u0000 🌍 é" } },
      "-",
      "",
      [1, -2.5, null, true],
      { nested: { "-": "-", "\\n": "\\" } },
    ].map((v) => JSON.stringify(v));
    expect(texts.some((t) => t.includes("\n"))).toBe(false);
    expect(await roundTrip(texts)).toEqual(texts);
  });

  it("keeps NULLs and the count, also for none and for one NULL", async () => {
    expect(await roundTrip([])).toEqual([]);
    expect(await roundTrip([null])).toEqual([null]);
    expect(await roundTrip([null, "{}", null])).toEqual([null, "{}", null]);
  });

  it("zips with the other columns of an unnest row by row", async () => {
    const texts = ['{"seq":1}', null, '{"seq":3}'];
    const res = await client.query<{ seq: number; event: unknown }>(
      `SELECT u.seq, u.event::json AS event FROM unnest($1::int[], ${linesArray("$2")}) AS u(seq, event) ORDER BY u.seq`,
      [[1, 2, 3], jsonLines(texts)],
    );
    expect(res.rows).toEqual([
      { seq: 1, event: { seq: 1 } },
      { seq: 2, event: null },
      { seq: 3, event: { seq: 3 } },
    ]);
  });
});
