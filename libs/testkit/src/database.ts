import { createHash } from "node:crypto";
import pg from "pg";
import { migrate, readMigrations } from "@tog/db";
import { testInfraConfig, uniqueId } from "./infra.ts";

// Each test file gets its own database, cloned from a template that holds the current
// migrations. The template's name carries a hash of the migrations, so changing a
// migration builds a new template; building it is serialized by an advisory lock so
// parallel workers do it once.

const TEMPLATE_LOCK = 4_242_001;

/** `url` with its database replaced by `database`. */
export function withDatabase(url: string, database: string): string {
  const u = new URL(url);
  u.pathname = `/${database}`;
  return u.toString();
}

async function templateName(): Promise<string> {
  const migrations = await readMigrations();
  const hash = createHash("sha256");
  for (const m of migrations) hash.update(m.name).update(m.checksum);
  return `tog_tmpl_${hash.digest("hex").slice(0, 16)}`;
}

async function ensureTemplate(admin: pg.Client, name: string): Promise<void> {
  await admin.query("SELECT pg_advisory_lock($1)", [TEMPLATE_LOCK]);
  try {
    const { rowCount } = await admin.query("SELECT 1 FROM pg_database WHERE datname = $1", [name]);
    if (rowCount) return;
    await admin.query(`CREATE DATABASE "${name}"`);
    try {
      await migrate({ databaseUrl: withDatabase(testInfraConfig.TEST_DATABASE_ADMIN_URL, name) });
    } catch (err) {
      await admin.query(`DROP DATABASE IF EXISTS "${name}"`);
      throw err;
    }
    await admin.query(`ALTER DATABASE "${name}" WITH is_template = true`);
  } finally {
    await admin.query("SELECT pg_advisory_unlock($1)", [TEMPLATE_LOCK]);
  }
}

export interface TestDatabase {
  name: string;
  url: string;
  drop(): Promise<void>;
}

/** A fresh, migrated database for one test file. */
export async function createTestDatabase(options: { migrated?: boolean } = {}): Promise<TestDatabase> {
  const admin = new pg.Client({ connectionString: testInfraConfig.TEST_DATABASE_ADMIN_URL });
  await admin.connect();
  const name = uniqueId("tog_test");
  try {
    if (options.migrated === false) {
      await admin.query(`CREATE DATABASE "${name}"`);
    } else {
      const template = await templateName();
      await ensureTemplate(admin, template);
      await admin.query(`CREATE DATABASE "${name}" TEMPLATE "${template}"`);
    }
  } finally {
    await admin.end();
  }
  const url = withDatabase(testInfraConfig.TEST_DATABASE_ADMIN_URL, name);
  return {
    name,
    url,
    async drop() {
      const c = new pg.Client({ connectionString: testInfraConfig.TEST_DATABASE_ADMIN_URL });
      await c.connect();
      try {
        await c.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
      } finally {
        await c.end();
      }
    },
  };
}

/**
 * Waits until PostgreSQL at `url` answers a query again, as after a crash (it replays its WAL
 * first); returns when it did. Throws after `withinMs`.
 */
export async function untilPostgresAnswers(url: string, withinMs = 60_000): Promise<number> {
  const end = Date.now() + withinMs;
  for (;;) {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
    client.on("error", () => undefined);
    try {
      await client.connect();
      await client.query("SELECT 1");
      return Date.now();
    } catch {
      if (Date.now() > end) throw new Error(`PostgreSQL did not answer again within ${withinMs} ms`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    } finally {
      await client.end().catch(() => undefined);
    }
  }
}
