import pg from "pg";
import { afterAll, beforeAll } from "vitest";
import { createTestDatabase } from "@tog/testkit";

/**
 * A fresh test database (migrated) and one client on it for the calling describe block, dropped
 * after it. Read `client` inside tests: it is connected in beforeAll.
 */
export function testDatabaseClient(): { readonly client: pg.Client } {
  let db: Awaited<ReturnType<typeof createTestDatabase>> | undefined;
  let client: pg.Client | undefined;
  beforeAll(async () => {
    db = await createTestDatabase();
    client = new pg.Client({ connectionString: db.url });
    await client.connect();
  });
  afterAll(async () => {
    await client?.end();
    await db?.drop();
  });
  return {
    get client() {
      if (!client) throw new Error("testDatabaseClient: read the client inside a test");
      return client;
    },
  };
}
