import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { createDbClient, createDbPool, type Db, type DbPool } from "@tog/db";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";
import {
  createEventHistoryRepository,
  insertEventRows,
  toEventRow,
  type EventHistoryRepository,
  type EventRow,
} from "../../src/events/index.ts";
import { encodedEvents, newTaskId } from "./helpers.ts";

describe("event history repository", () => {
  let tdb: TestDatabase;
  let db: Db;
  let pool: DbPool;
  let repo: EventHistoryRepository;
  const w1 = newTaskId();
  const w2 = newTaskId();
  let texts: string[];

  const rowsOf = (jsons: string[]): EventRow[] =>
    jsons.map((json) => {
      const r = toEventRow(json);
      if (!r.ok) throw new Error(r.reason);
      return r.row;
    });

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDbClient({ databaseUrl: tdb.url, poolMax: 2 });
    pool = createDbPool({ databaseUrl: tdb.url, poolMax: 2 });
    repo = createEventHistoryRepository({ db });
    texts = encodedEvents(w1, 120).map((e) => e.json);
    // Seq 3 hand-formatted: served as stored, not re-serialized.
    texts[2] = `{"workflow_id" : "${w1}", "seq":3 ,"type":"PROGRESS","agent_id":"orchestrator","timestamp":"2026-01-01T00:00:00Z","data":{"z":1,"a":2}}`;
    // Stored out of order, as concurrent batches may.
    await insertEventRows(pool, rowsOf([...texts].reverse()));
    await insertEventRows(pool, rowsOf(encodedEvents(w2, 5).map((e) => e.json)));
  });
  afterAll(async () => {
    await db.$disconnect();
    await pool.end();
    await tdb.drop();
  });

  it("pages events in seq order with the total of the task", async () => {
    const first = await repo.listEvents({ taskId: w1, limit: 50, offset: 0 });
    expect(first.totalCount).toBe(120);
    expect(first.events).toEqual(texts.slice(0, 50));
    expect(first.events[2]).toBe(texts[2]);

    const last = await repo.listEvents({ taskId: w1, limit: 50, offset: 100 });
    expect(last.events).toEqual(texts.slice(100));
    expect(last.totalCount).toBe(120);

    const beyond = await repo.listEvents({ taskId: w1, limit: 50, offset: 500 });
    expect(beyond).toEqual({ events: [], totalCount: 120 });
  });

  it("continues after a seq cursor, offset counting from it", async () => {
    const page = await repo.listEvents({ taskId: w1, limit: 10, offset: 0, afterSeq: 60 });
    expect(page.events).toEqual(texts.slice(60, 70));
    expect(page.totalCount).toBe(120);
    const skipped = await repo.listEvents({ taskId: w1, limit: 10, offset: 5, afterSeq: 60 });
    expect(skipped.events).toEqual(texts.slice(65, 75));
    const end = await repo.listEvents({ taskId: w1, limit: 10, offset: 0, afterSeq: 120 });
    expect(end).toEqual({ events: [], totalCount: 120 });
  });

  it("keeps tasks apart and answers empty for unknown or malformed ids", async () => {
    expect((await repo.listEvents({ taskId: w2, limit: 200, offset: 0 })).totalCount).toBe(5);
    expect(await repo.listEvents({ taskId: newTaskId(), limit: 10, offset: 0 })).toEqual({
      events: [],
      totalCount: 0,
    });
    expect(await repo.listEvents({ taskId: "not-a-uuid", limit: 10, offset: 0 })).toEqual({
      events: [],
      totalCount: 0,
    });
    await expect(repo.listEvents({ taskId: w1, limit: 0, offset: 0 })).rejects.toBeInstanceOf(ValidationError);
    await expect(repo.listEvents({ taskId: w1, limit: 1, offset: -1 })).rejects.toBeInstanceOf(ValidationError);
  });

  it("reports the last stored seq", async () => {
    expect(await repo.lastSeq(w1)).toBe(120);
    expect(await repo.lastSeq(w2)).toBe(5);
    expect(await repo.lastSeq(newTaskId())).toBe(0);
  });

  it("reads a range for replay, with each event's seq", async () => {
    const range = await repo.readRange(w1, 117, 100);
    expect(range).toEqual([
      { seq: 118, json: texts[117] },
      { seq: 119, json: texts[118] },
      { seq: 120, json: texts[119] },
    ]);
    expect((await repo.readRange(w1, 0, 4)).map((e) => e.seq)).toEqual([1, 2, 3, 4]);
    expect(await repo.readRange(w1, 120, 10)).toEqual([]);
  });

  it("stores an event once however often it is written", async () => {
    const again = rowsOf(texts.slice(0, 10));
    expect(await insertEventRows(pool, [...again, ...again])).toBe(0);
    expect(await repo.lastSeq(w1)).toBe(120);
    expect((await repo.listEvents({ taskId: w1, limit: 1, offset: 0 })).totalCount).toBe(120);
  });
});
