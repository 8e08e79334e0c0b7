import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { EVENT_PERSISTER, publish, systemSubjects, type Bus } from "@tog/bus";
import { createDbClient, createDbPool, type Db, type DbPool } from "@tog/db";
import { createTestDatabase, testInfraConfig, type TestDatabase } from "@tog/testkit";
import { startEventPersister, type EventPersister, type EventPersisterMetrics } from "../../src/events/index.ts";
import {
  closeBus,
  encodedEvents,
  newTaskId,
  openProvisionedBus,
  silentLogger,
  waitFor,
  type EncodedEvent,
} from "./helpers.ts";

describe("event persister", () => {
  let tdb: TestDatabase;
  let db: Db;
  let pool: DbPool;
  let bus: Bus;
  let persister: EventPersister | undefined;

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDbClient({ databaseUrl: tdb.url, poolMax: 4 });
    pool = createDbPool({ databaseUrl: tdb.url, poolMax: 4 });
    bus = await openProvisionedBus("evpersist");
  });
  afterEach(async () => {
    await persister?.stop();
    persister = undefined;
  });
  afterAll(async () => {
    await closeBus(bus);
    await db.$disconnect();
    await pool.end();
    await tdb.drop();
  });

  const subjects = () => systemSubjects(bus.prefix);
  const counters = () => {
    const c = { persisted: 0, duplicates: 0, rejected: 0, writeErrors: 0, batches: 0, largestBatch: 0 };
    const metrics: EventPersisterMetrics = {
      persisted: (n) => (c.persisted += n),
      duplicates: (n) => (c.duplicates += n),
      rejected: (n) => (c.rejected += n),
      writeErrors: (n) => (c.writeErrors += n),
      batchWritten: (size) => {
        c.batches++;
        c.largestBatch = Math.max(c.largestBatch, size);
      },
    };
    return { c, metrics };
  };
  const consumerState = async () => {
    const info = await bus.jsm.consumers.info(bus.streamName("EVENTS"), EVENT_PERSISTER);
    return { pending: info.num_pending, ackPending: info.num_ack_pending };
  };
  const drained = async () => {
    const s = await consumerState();
    return s.pending === 0 && s.ackPending === 0;
  };
  const publishAll = async (events: EncodedEvent[], withMsgId = true) => {
    for (let i = 0; i < events.length; i += 200) {
      await Promise.all(
        events
          .slice(i, i + 200)
          .map((e) =>
            publish(
              bus,
              subjects().events(e.taskId),
              new TextEncoder().encode(e.json),
              withMsgId ? { msgID: e.msgId } : {},
            ),
          ),
      );
    }
  };
  const storedTexts = async (taskIds: string[]) => {
    const rows = await db.$queryRaw<{ task_id: string; seq: number; event: string }[]>`
      SELECT task_id::text AS task_id, seq, event::text AS event FROM task_events
      WHERE task_id = ANY(${taskIds}::uuid[]) ORDER BY task_id, seq`;
    return new Map(rows.map((r) => [`${r.task_id}:${r.seq}`, r.event]));
  };
  const countOf = async (taskIds: string[]) => {
    const [row] = await db.$queryRaw<{ n: number }[]>`
      SELECT count(*)::int AS n FROM task_events WHERE task_id = ANY(${taskIds}::uuid[])`;
    return row?.n ?? 0;
  };

  it("stores 2,000 events of several tasks exactly once, each byte for byte as published", async () => {
    // A worker of this release sends the events of one write as one message, one per line.
    const multi = newTaskId();
    const multiEvents = encodedEvents(multi, 9);
    const tasks = [newTaskId(), newTaskId(), newTaskId(), newTaskId()];
    const events = tasks.flatMap((w) => encodedEvents(w, 500));
    // Hand-formatted JSON (spacing, key order) must come back as sent, not re-serialized.
    const odd = newTaskId();
    const oddEvents: EncodedEvent[] = [
      {
        taskId: odd,
        seq: 1,
        msgId: `${odd}:1`,
        json: `{ "seq" : 1,\t  "workflow_id": "${odd}", "type":"PROGRESS","agent_id":"orchestrator","timestamp":"2026-01-01T00:00:00.000Z","message":"x\\u00e9\\ud83c\\udf0d","data":{"b":1,"a":[1.50,2e3]} }`,
      },
      {
        taskId: odd,
        seq: 2,
        msgId: `${odd}:2`,
        json: `{"workflow_id":"${odd}","seq":2,"type":"FUTURE_TYPE","agent_id":"a","timestamp":"2026-01-01T00:00:00.001+02:00","message":"\\u0000 nul escape"}`,
      },
    ];
    // Interleave the tasks, as concurrent runs would.
    const interleaved = [...events].sort((a, b) => a.seq - b.seq || a.taskId.localeCompare(b.taskId));
    await publishAll([...interleaved, ...oddEvents]);
    // Republished with the same msg-id: the stream drops them.
    await publishAll(interleaved.slice(0, 100));
    // Republished after the dedupe window (no msg-id here): stored twice in the stream, once in the database.
    const lateRepeats = interleaved.slice(200, 250);
    await publishAll(lateRepeats, false);
    for (let i = 0; i < multiEvents.length; i += 3) {
      const texts = multiEvents.slice(i, i + 3).map((e) => e.json);
      await publish(bus, subjects().events(multi), new TextEncoder().encode(texts.join("\n")));
    }
    // One of them again: its three events are duplicates.
    await publish(
      bus,
      subjects().events(multi),
      new TextEncoder().encode(
        multiEvents
          .slice(3, 6)
          .map((e) => e.json)
          .join("\n"),
      ),
    );

    const { c, metrics } = counters();
    persister = startEventPersister({ bus, pool, logger: silentLogger, metrics });
    const all = [...tasks, odd, multi];
    await waitFor(async () => (await countOf(all)) === 2_011 && (await drained()), 30_000, "all events stored");

    const stored = await storedTexts(all);
    expect(stored.size).toBe(2_011);
    for (const e of [...events, ...oddEvents, ...multiEvents]) expect(stored.get(`${e.taskId}:${e.seq}`)).toBe(e.json);
    expect(c.persisted).toBe(2_011);
    expect(c.duplicates).toBe(53);
    expect(c.rejected).toBe(0);
    expect(c.writeErrors).toBe(0);
    // At most 500 messages per batch; each of the four three-event messages adds two rows to its batch.
    expect(c.largestBatch).toBeLessThanOrEqual(500 + 4 * 2);
    // Batched: far fewer statements than events.
    expect(c.batches).toBeLessThan(200);

    // Columns are filled from the event.
    const [row] = await db.$queryRaw<{ type: string; agent_id: string; ts: string }[]>`
      SELECT type, agent_id, to_char("timestamp" AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS') AS ts
      FROM task_events WHERE task_id = ${odd}::uuid AND seq = 2`;
    expect(row).toEqual({ type: "FUTURE_TYPE", agent_id: "a", ts: "2025-12-31T22:00:00.001" });
  });

  it("terminates messages that are not events without holding back the others", async () => {
    const w = newTaskId();
    const good = encodedEvents(w, 30);
    const bad = [
      "not json",
      "[1,2,3]",
      JSON.stringify({
        workflow_id: "not-a-uuid",
        seq: 1,
        type: "PROGRESS",
        agent_id: "a",
        timestamp: "2026-01-01T00:00:00Z",
      }),
      JSON.stringify({ workflow_id: w, seq: 0, type: "PROGRESS", agent_id: "a", timestamp: "2026-01-01T00:00:00Z" }),
      JSON.stringify({
        workflow_id: w,
        seq: 99,
        type: "X".repeat(33),
        agent_id: "a",
        timestamp: "2026-01-01T00:00:00Z",
      }),
      JSON.stringify({ workflow_id: w, seq: 98, type: "PROGRESS", agent_id: "a", timestamp: "yesterday" }),
      JSON.stringify({ workflow_id: w, type: "PROGRESS", agent_id: "a", timestamp: "2026-01-01T00:00:00Z" }),
    ];
    const subject = subjects().events(w);
    await publishAll(good.slice(0, 15));
    for (const text of bad) await publish(bus, subject, new TextEncoder().encode(text));
    await publish(bus, subject, new Uint8Array([0x7b, 0xff, 0xfe, 0x7d])); // not UTF-8
    // A message of several events with one that cannot be stored is refused whole.
    const withBad = [...encodedEvents(w, 2, 40).map((e) => e.json), "not json"].join("\n");
    await publish(bus, subject, new TextEncoder().encode(withBad));
    await publishAll(good.slice(15));

    const { c, metrics } = counters();
    persister = startEventPersister({ bus, pool, logger: silentLogger, metrics });
    await waitFor(async () => (await countOf([w])) === 30 && (await drained()), 15_000, "good events stored");
    expect(c.rejected).toBe(bad.length + 2);
    const stored = await storedTexts([w]);
    expect([...stored.values()]).toEqual(good.map((e) => e.json));
    // Terminated, not redelivered: nothing stays pending.
    await new Promise((r) => setTimeout(r, 300));
    expect(await consumerState()).toEqual({ pending: 0, ackPending: 0 });
  });

  it("terminates only the event PostgreSQL refuses for its data, storing the rest of its batch", async () => {
    // A real refusal (SQLSTATE 22023) for one event that passes every check of the persister.
    await db.$executeRawUnsafe(`
      CREATE FUNCTION refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.agent_id = 'poison' THEN RAISE EXCEPTION 'poisoned event' USING ERRCODE = '22023'; END IF;
        RETURN NEW;
      END $$`);
    await db.$executeRawUnsafe(
      `CREATE TRIGGER refuse_poison BEFORE INSERT ON task_events FOR EACH ROW EXECUTE FUNCTION refuse_poison()`,
    );
    try {
      const w = newTaskId();
      const events = encodedEvents(w, 40);
      const poisoned = events[17]!;
      poisoned.json = poisoned.json.replace(/"agent_id":"[^"]*"/, '"agent_id":"poison"');
      await publishAll(events);
      const { c, metrics } = counters();
      persister = startEventPersister({ bus, pool, logger: silentLogger, metrics });
      await waitFor(async () => (await countOf([w])) === 39 && (await drained()), 15_000, "the other events stored");
      expect(c.rejected).toBe(1);
      expect(c.writeErrors).toBe(0);
      const stored = await storedTexts([w]);
      expect(stored.has(`${w}:18`)).toBe(false);
      for (const e of events) if (e !== poisoned) expect(stored.get(`${w}:${e.seq}`)).toBe(e.json);
    } finally {
      await db.$executeRawUnsafe(`DROP TRIGGER refuse_poison ON task_events`);
      await db.$executeRawUnsafe(`DROP FUNCTION refuse_poison()`);
    }
  });

  it("loses nothing while PostgreSQL refuses connections, and catches up once it is back", async () => {
    const admin = createDbClient({ databaseUrl: testInfraConfig.TEST_DATABASE_ADMIN_URL, poolMax: 1 });
    const persisterDb = createDbPool({ databaseUrl: tdb.url, poolMax: 2 });
    try {
      const w = newTaskId();
      const events = encodedEvents(w, 1_000);
      const { c, metrics } = counters();
      persister = startEventPersister({ bus, pool: persisterDb, logger: silentLogger, metrics, maxBackoffMs: 300 });

      await publishAll(events.slice(0, 300));
      await waitFor(async () => (await countOf([w])) === 300 && (await drained()), 15_000, "first events stored");

      // A real outage: no new connections, existing ones killed.
      await admin.$executeRawUnsafe(`ALTER DATABASE "${tdb.name}" ALLOW_CONNECTIONS false`);
      await admin.$executeRawUnsafe(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${tdb.name}' AND pid <> pg_backend_pid()`,
      );
      await publishAll(events.slice(300));
      await waitFor(async () => c.writeErrors >= 3, 15_000, "failed writes");
      // Nothing acked while the database is down: the persister holds the events.
      const during = await consumerState();
      expect(during.pending + during.ackPending).toBe(700);

      await admin.$executeRawUnsafe(`ALTER DATABASE "${tdb.name}" ALLOW_CONNECTIONS true`);
      await waitFor(
        async () => (await countOf([w])) === 1_000 && (await drained()),
        30_000,
        "catch-up after the outage",
      );

      const stored = await storedTexts([w]);
      expect([...stored.keys()]).toEqual(events.map((e) => `${w}:${e.seq}`));
      for (const e of events) expect(stored.get(`${w}:${e.seq}`)).toBe(e.json);
      expect(c.persisted).toBe(1_000);
      expect(c.rejected).toBe(0);
    } finally {
      await admin.$executeRawUnsafe(`ALTER DATABASE "${tdb.name}" ALLOW_CONNECTIONS true`);
      await persister?.stop();
      persister = undefined;
      await persisterDb.end();
      await admin.$disconnect();
    }
  });

  it("stop() writes the batch it already received before returning", async () => {
    const w = newTaskId();
    const events = encodedEvents(w, 120);
    await publishAll(events);
    // A batch that would wait 60 s to fill: only stop() can flush it in time.
    persister = startEventPersister({ bus, pool, logger: silentLogger, batchSize: 500, maxWaitMs: 60_000 });
    await waitFor(async () => (await consumerState()).ackPending === 120, 10_000, "events held by the persister");
    expect(await countOf([w])).toBe(0);
    await persister.stop();
    expect(await countOf([w])).toBe(120);
    await waitFor(drained, 5_000, "acks");
  });

  it("stop() during an outage hands the held events back to the stream for another instance", async () => {
    const admin = createDbClient({ databaseUrl: testInfraConfig.TEST_DATABASE_ADMIN_URL, poolMax: 1 });
    const persisterDb = createDbPool({ databaseUrl: tdb.url, poolMax: 2 });
    const w = newTaskId();
    const events = encodedEvents(w, 50);
    try {
      await admin.$executeRawUnsafe(`ALTER DATABASE "${tdb.name}" ALLOW_CONNECTIONS false`);
      await admin.$executeRawUnsafe(
        `SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '${tdb.name}' AND pid <> pg_backend_pid()`,
      );
      const { c, metrics } = counters();
      const first = startEventPersister({ bus, pool: persisterDb, logger: silentLogger, metrics, maxBackoffMs: 200 });
      await publishAll(events);
      await waitFor(async () => c.writeErrors >= 1, 10_000, "a failed write");
      await first.stop();
    } finally {
      await admin.$executeRawUnsafe(`ALTER DATABASE "${tdb.name}" ALLOW_CONNECTIONS true`);
      await persisterDb.end();
      await admin.$disconnect();
    }
    // Handed back with a short nak delay: the next instance gets them well before ack_wait (30 s).
    const handedBackAt = Date.now();
    persister = startEventPersister({ bus, pool, logger: silentLogger });
    await waitFor(
      async () => (await countOf([w])) === 50 && (await drained()),
      15_000,
      "events stored by the next instance",
    );
    expect(Date.now() - handedBackAt).toBeLessThan(15_000);
  });
});
