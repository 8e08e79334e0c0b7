import { describe, expect, it } from "vitest";
import { actualShape, expectedShape } from "./schema-drift.ts";
import { testDatabaseClient } from "./test-client.ts";

// Fails when the SQL migrations and schema.prisma disagree: a column, type, nullability,
// DB default, primary key, index or foreign key present on one side only.
describe("migrations match schema.prisma", () => {
  const db = testDatabaseClient();

  it("has exactly the tables, columns, keys, indexes and foreign keys the schema declares", async () => {
    const expected = await expectedShape();
    const actual = await actualShape(db.client);
    expect(Object.keys(actual).sort()).toEqual(Object.keys(expected).sort());
    for (const table of Object.keys(expected)) {
      expect(actual[table], `table ${table}`).toEqual(expected[table]);
    }
  });

  it("notices a drift (the comparison can fail)", async () => {
    await db.client.query(`ALTER TABLE "users" ADD COLUMN "drift" TEXT`);
    await db.client.query(`ALTER TABLE "api_keys" ALTER COLUMN "name" DROP NOT NULL`);
    try {
      const actual = await actualShape(db.client);
      const expected = await expectedShape();
      expect(actual.users).not.toEqual(expected.users);
      expect(actual.api_keys).not.toEqual(expected.api_keys);
    } finally {
      await db.client.query(`ALTER TABLE "users" DROP COLUMN "drift"`);
      await db.client.query(`ALTER TABLE "api_keys" ALTER COLUMN "name" SET NOT NULL`);
    }
  });
});
