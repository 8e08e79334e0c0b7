import { readdirSync, statSync } from "node:fs";
import path from "node:path";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { crossWalSegments, postgresBinDir, startPrivatePostgres, type PrivatePostgres } from "../tasks/lib/postgres.ts";
import { readPostgresPauses } from "../tasks/lib/tail.ts";

// The bench's own PostgreSQL starts with its next WAL segments made, as a server that has run a
// while has them (docs/performance.md "WAL segments of a fresh instance").

let server: PrivatePostgres;
let client: pg.Client;

const SEGMENT = /^[0-9A-F]{24}$/;
/** The inode of every WAL segment file: a recycled segment keeps its inode, a new file gets one. */
const segmentInodes = () =>
  new Set(
    readdirSync(path.join(server.dataDir, "pg_wal"))
      .filter((f) => SEGMENT.test(f))
      .map((f) => statSync(path.join(server.dataDir, "pg_wal", f)).ino),
  );

beforeAll(async () => {
  server = await startPrivatePostgres({ binDir: postgresBinDir(), maxConnections: 20, slowStatementsMs: 50 });
  client = new pg.Client({ connectionString: server.adminUrl });
  await client.connect();
}, 120_000);

afterAll(async () => {
  await client?.end();
  await server?.stop();
});

describe("the bench's own PostgreSQL", () => {
  it("a fresh instance creates a file for each segment its WAL crosses into", async () => {
    const before = segmentInodes();
    await crossWalSegments(client, 4);
    const created = [...segmentInodes()].filter((ino) => !before.has(ino));
    // the start-up checkpoint may have made one segment ahead
    expect(created.length).toBeGreaterThanOrEqual(3);
  });

  it("after readyWal the next segments exist and crossing into them creates no file", async () => {
    const ahead = await server.readyWal();
    expect(ahead).toBeGreaterThanOrEqual(16);
    const before = segmentInodes();
    await crossWalSegments(client, 8);
    const created = [...segmentInodes()].filter((ino) => !before.has(ino));
    expect(created).toEqual([]);
  }, 60_000);

  it("with slowStatementsMs, a slow statement is in its log, dated, and a fast one is not (BENCH_PAUSES)", async () => {
    const before = Date.now();
    await client.query("SELECT pg_sleep(0.12) AS slow_one");
    await client.query("SELECT 1 AS fast_one");
    const after = Date.now();
    // The log is written by the server process; give it a moment.
    await new Promise((r) => setTimeout(r, 200));
    const pauses = readPostgresPauses(server.logFile);
    const slow = pauses.filter((p) => p.what.startsWith("SELECT pg_sleep(0.12)"));
    expect(slow).toHaveLength(1);
    expect(slow[0]!.ms).toBeGreaterThanOrEqual(120);
    expect(slow[0]!.at).toBeGreaterThanOrEqual(before - 5);
    expect(slow[0]!.at + slow[0]!.ms).toBeLessThanOrEqual(after + 5);
    expect(pauses.some((p) => p.what.includes("fast_one"))).toBe(false);
  });
});
