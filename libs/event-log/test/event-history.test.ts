import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import { buildEvent } from "@tog/events";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";
import { createEventHistoryRepository, type EventHistoryRepository } from "../src/index.ts";

// The reader of the permanent log against a real PostgreSQL. Rows are written with plain SQL,
// the way the orchestrator's persister writes them (json column holding the exact text).

const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

function eventTexts(taskId: string, count: number): string[] {
  const out: string[] = [];
  for (let seq = 1; seq <= count; seq++) {
    const event = buildEvent({
      workflow_id: taskId,
      type: "LLM_PARTIAL",
      agent_id: "agent-Ω",
      message: `chunk ${seq}`,
      seq,
      trace_id: TRACE_ID,
      data: { chunk: `héllo "wörld" 🌍 ${seq}\n`, chunk_index: seq - 1, total_tokens_so_far: seq },
      at: Date.UTC(2026, 0, 1) + seq,
    });
    out.push(JSON.stringify(event));
  }
  return out;
}

async function insert(db: Db, taskId: string, texts: readonly string[]): Promise<void> {
  for (const [i, text] of texts.entries()) {
    await db.$executeRaw`
      INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
      VALUES (${taskId}::uuid, ${i + 1}, 'LLM_PARTIAL', 'agent', now(), ${text}::json)`;
  }
}

describe("event history repository (@tog/event-log)", () => {
  let tdb: TestDatabase;
  let db: Db;
  let repo: EventHistoryRepository;
  const w1 = randomUUID();
  const w2 = randomUUID();
  let texts: string[];

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDbClient({ databaseUrl: tdb.url, poolMax: 2 });
    repo = createEventHistoryRepository({ db });
    texts = eventTexts(w1, 30);
    // Served as stored, not re-serialized.
    texts[2] = `{"workflow_id" : "${w1}", "seq":3 ,"type":"PROGRESS","data":{"z":1,"a":2}}`;
    await insert(db, w1, texts);
    await insert(db, w2, eventTexts(w2, 5));
  });
  afterAll(async () => {
    await db.$disconnect();
    await tdb.drop();
  });

  it("pages events in seq order with the task's total", async () => {
    const page = await repo.listEvents({ taskId: w1, limit: 10, offset: 0 });
    expect(page.totalCount).toBe(30);
    expect(page.events).toEqual(texts.slice(0, 10));
    expect(await repo.listEvents({ taskId: w1, limit: 5, offset: 2, afterSeq: 20 })).toEqual({
      events: texts.slice(22, 27),
      totalCount: 30,
    });
    expect(await repo.listEvents({ taskId: "not-a-uuid", limit: 10, offset: 0 })).toEqual({
      events: [],
      totalCount: 0,
    });
    await expect(repo.listEvents({ taskId: w1, limit: 0, offset: 0 })).rejects.toBeInstanceOf(ValidationError);
  });

  it("takes a cursor past the seq column's range (a client's after_seq) as after every event", async () => {
    for (const afterSeq of [2 ** 31, Number.MAX_SAFE_INTEGER]) {
      expect(await repo.listEvents({ taskId: w1, limit: 10, offset: 0, afterSeq })).toEqual({
        events: [],
        totalCount: 30,
      });
      expect(await repo.readRange(w1, afterSeq, 10)).toEqual([]);
    }
  });

  it("reads a range after a seq, each event with its seq and exact text", async () => {
    expect(await repo.readRange(w1, 27, 100)).toEqual([
      { seq: 28, json: texts[27] },
      { seq: 29, json: texts[28] },
      { seq: 30, json: texts[29] },
    ]);
    expect((await repo.readRange(w1, 0, 4)).map((e) => e.json)).toEqual(texts.slice(0, 4));
    expect(await repo.readRange(w1, 30, 10)).toEqual([]);
    expect(await repo.readRange(randomUUID(), 0, 10)).toEqual([]);
    await expect(repo.readRange(w1, -1, 10)).rejects.toBeInstanceOf(ValidationError);
  });

  it("reports the last stored seq and event", async () => {
    expect(await repo.lastSeq(w1)).toBe(30);
    expect(await repo.lastSeq(w2)).toBe(5);
    expect(await repo.lastSeq(randomUUID())).toBe(0);
    expect(await repo.readLast(w1)).toEqual({ seq: 30, json: texts[29] });
    expect(await repo.readLast(randomUUID())).toBeNull();
    expect(await repo.readLast("nope")).toBeNull();
  });
});
