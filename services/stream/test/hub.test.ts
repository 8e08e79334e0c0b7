// The fan-out core against the real NATS (JetStream + core) and PostgreSQL: one hub per
// task, replay + live with no gap or duplicate at the seam, repair of lost live messages,
// and replay from the permanent log past the real-time window.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { NatsConnection } from "@nats-io/nats-core";
import type { Bus } from "@tog/bus";
import { createDbClient, type Db } from "@tog/db";
import { createEventHistoryRepository } from "@tog/event-log";
import { createTestDatabase, deleteStreamsOf, openTestBus, provisionTestBus, type TestDatabase } from "@tog/testkit";
import type { HubEvent } from "../src/hub/hub-event.ts";
import { replayAndAttach, Subscription, type Sink } from "../src/hub/subscription.ts";
import { TaskHub } from "../src/hub/task-hub.ts";
import { createEventStore, type EventStore } from "../src/store/event-store.ts";
import { JetStreamEvents } from "../src/store/jetstream-events.ts";
import { persist, range, Recorder, silentLogger, waitUntil, WorkerDouble } from "./support.ts";

let tdb: TestDatabase;
let db: Db;
let bus: Bus;
let store: EventStore;

function storeFor(b: Bus): EventStore {
  return createEventStore({
    cache: new JetStreamEvents({ js: b.js, jsm: b.jsm, stream: b.streamName("EVENTS") }),
    log: createEventHistoryRepository({ db }),
    prefix: b.prefix,
    logger: silentLogger,
  });
}

function hubFor(
  worker: WorkerDouble,
  options: { nc?: NatsConnection; store?: EventStore; cacheSize?: number; b?: Bus } = {},
): TaskHub {
  const b = options.b ?? bus;
  return new TaskHub({
    taskId: worker.taskId,
    subject: worker.subject,
    nc: options.nc ?? b.nc,
    store: options.store ?? store,
    logger: silentLogger,
    cacheSize: options.cacheSize ?? 50,
    readBatch: 40,
    repairGiveUpMs: 3_000,
  });
}

/** A connection whose core subscriptions lose the messages `drop` picks (network loss). */
function lossy(nc: NatsConnection, drop: (text: string) => boolean): NatsConnection {
  return new Proxy(nc, {
    get(target, prop, receiver) {
      if (prop === "subscribe") {
        return (subject: string, opts: { callback: (err: Error | null, msg: { string(): string }) => void }) =>
          target.subscribe(subject, {
            ...opts,
            callback: (err, msg) => {
              if (!err && drop(msg.string())) return;
              opts.callback(err, msg);
            },
          });
      }
      const value = Reflect.get(target, prop, receiver);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** Records what a subscription writes; never slow. */
class MemorySink implements Sink {
  readonly events: HubEvent[] = [];
  finished: HubEvent | null | undefined;
  buffered = 0;
  needsDrain = false;
  send(event: HubEvent) {
    this.events.push(event);
  }
  drained() {
    return Promise.resolve();
  }
  finish(terminal: HubEvent | null) {
    this.finished = terminal;
  }
  overflow() {
    throw new Error("unexpected overflow");
  }
}

const JOIN = { chunk: 7, gapGiveUpMs: 3_000, logger: silentLogger };

beforeAll(async () => {
  tdb = await createTestDatabase();
  db = createDbClient({ databaseUrl: tdb.url, poolMax: 4 });
  bus = await openTestBus("stream-hub");
  await provisionTestBus(bus);
  store = storeFor(bus);
});
afterAll(async () => {
  await deleteStreamsOf(bus);
  await bus.close();
  await db.$disconnect();
  await tdb.drop();
});

describe.each([1, 4])("task hub, %i event(s) per message", (perMessage) => {
  it("decodes each live event once and hands the same frame to every subscriber", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    const hub = hubFor(worker);
    await hub.ready();
    const a = new Recorder();
    const b = new Recorder();
    expect(hub.tryAttach(a, 10)).toBe("attached");
    expect(hub.tryAttach(b, 10)).toBe("attached");
    await worker.emit(12, { last: true });
    await waitUntil(() => a.closed && b.closed, 10_000, "terminal event");
    expect(a.seqs).toEqual(range(1, 12));
    a.events.forEach((e, i) => expect(e).toBe(b.events[i]));
    const last = a.events.at(-1)!;
    expect(last.terminal).toBe(true);
    expect(JSON.parse(last.json.toString())).toMatchObject({
      type: "WORKFLOW_COMPLETED",
      status: "COMPLETED",
      result: "the answer",
    });
    expect(last.sse.toString()).toBe(
      `id: ${last.streamId}\nevent: WORKFLOW_COMPLETED\ndata: ${last.json.toString()}\n\n`,
    );
    expect(hub.terminalSeq).toBe(12);
    hub.close();
  });

  it("lets clients join and resume mid-stream with no gap and no duplicate at the seam", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    await worker.emit(60);
    const hub = hubFor(worker, { cacheSize: 25 });
    await hub.ready();
    const total = 400;
    const producing = (async () => {
      while (worker.seq < total - 1) {
        await worker.emit(3);
        await new Promise((r) => setTimeout(r, 1));
      }
      await worker.emit(1, { last: true });
    })();
    const joins: { resume: number; sink: MemorySink; sub: Subscription }[] = [];
    for (let i = 0; i < 24; i++) {
      await new Promise((r) => setTimeout(r, 5 + Math.floor(Math.random() * 20)));
      const resume = Math.floor(Math.random() * (worker.seq + 5));
      const sink = new MemorySink();
      const sub = new Subscription({
        taskId: worker.taskId,
        filter: null,
        resumeAfter: resume,
        sink,
        maxBufferBytes: 1 << 20,
      });
      joins.push({ resume, sink, sub });
      void replayAndAttach(sub, hub, JOIN);
    }
    await producing;
    await waitUntil(() => joins.every((j) => j.sink.finished !== undefined), 15_000, "every client to finish");
    for (const j of joins) {
      expect(j.sink.events.map((e) => e.seq)).toEqual(range(j.resume + 1, total));
      // A client that joins after the end, resuming at or past the terminal event, is ended
      // without one (the producer can finish before the last joins on a busy machine).
      if (j.resume >= total) expect(j.sink.finished).toBeNull();
      else expect(j.sink.finished?.seq).toBe(total);
    }
    hub.close();
  });

  it("repairs live messages lost by core NATS from the store, in order", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    // Gaps with events after them (a lost last message is found by the head check, below).
    const lost = perMessage === 1 ? /"seq":(5|6|9),/ : /"seq":5,/;
    const hub = hubFor(worker, { nc: lossy(bus.nc, (t) => lost.test(t)) });
    await hub.ready();
    const r = new Recorder();
    hub.tryAttach(r, 10);
    await worker.emit(12, { last: true });
    await waitUntil(() => r.closed, 10_000, "terminal event");
    expect(r.seqs).toEqual(range(1, 12));
    hub.close();
  });

  it("finds a lost last event with a head check", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    const hub = hubFor(worker, { nc: lossy(bus.nc, (t) => t.includes('"WORKFLOW_COMPLETED"')) });
    await hub.ready();
    const r = new Recorder();
    hub.tryAttach(r, 10);
    await worker.emit(5, { last: true });
    await waitUntil(() => r.delivered === 4, 5_000, "events before the lost one");
    expect(r.closed).toBe(false);
    await hub.checkHead();
    await waitUntil(() => r.closed, 5_000, "the terminal event");
    expect(r.seqs).toEqual(range(1, 5));
    hub.close();
  });

  it("starts from the store's position: a finished task ends a client resuming at its end", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    await worker.emit(8, { failed: true });
    const hub = hubFor(worker);
    await hub.ready();
    expect(hub.head).toBe(8);
    expect(hub.terminalSeq).toBe(8);
    const atEnd = new Recorder(8);
    expect(hub.tryAttach(atEnd, 10)).toBe("closed");
    expect(atEnd.ended).toBe(true);
    const sink = new MemorySink();
    const sub = new Subscription({
      taskId: worker.taskId,
      filter: new Set(["PROGRESS"]),
      resumeAfter: 2,
      sink,
      maxBufferBytes: 1 << 20,
    });
    await replayAndAttach(sub, hub, JOIN);
    expect(sink.events.map((e) => e.seq)).toEqual([5]);
    expect(sink.finished?.seq).toBe(8);
    hub.close();
  });

  it("catches up with the store for a client resuming past its head", async () => {
    // Every live message lost: the hub knows only what it asks the store for.
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    const hub = hubFor(worker, { nc: lossy(bus.nc, () => true) });
    await hub.ready();
    await worker.emit(3);
    await hub.reach(2);
    expect(hub.head).toBe(3);
    expect(hub.terminalSeq).toBeNull();
    // Past anything stored: one look at the store, no wait for events that do not exist.
    const started = Date.now();
    await hub.reach(50);
    expect(hub.head).toBe(3);
    expect(Date.now() - started).toBeLessThan(2_000);
    await worker.emit(2, { last: true });
    await hub.reach(5);
    expect(hub.head).toBe(5);
    expect(hub.terminalSeq).toBe(5);
    hub.close();
  });

  it("an unknown task starts empty and streams from its first event", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    const hub = hubFor(worker);
    await hub.ready();
    expect(hub.head).toBe(0);
    const r = new Recorder();
    expect(hub.tryAttach(r, 10)).toBe("attached");
    await worker.emit(3, { last: true });
    await waitUntil(() => r.closed);
    expect(r.seqs).toEqual([1, 2, 3]);
    hub.close();
  });
});

describe.each([1, 4])("event store, %i event(s) per message", (perMessage) => {
  it("reads any range of the real-time cache, however many other tasks share it", async () => {
    const worker = new WorkerDouble(bus, randomUUID(), perMessage);
    const noise = new WorkerDouble(bus, randomUUID(), perMessage);
    for (let i = 0; i < 30; i++) {
      await worker.emit(4);
      await noise.emit(3);
    }
    for (const after of [0, 1, 57, 100, 119]) {
      const events = await store.readAfter(worker.taskId, after, 10);
      expect(events.map((e) => e.seq)).toEqual(range(after + 1, Math.min(120, after + 10)));
    }
    // Consecutive batches continue where the last one ended.
    const first = await store.readAfter(worker.taskId, 10, 25);
    const next = await store.readAfter(worker.taskId, first.at(-1)!.seq, 25);
    expect([...first, ...next].map((e) => e.seq)).toEqual(range(11, 60));
    expect(await store.readAfter(worker.taskId, 120, 10)).toEqual([]);
    expect((await store.position(worker.taskId)).lastSeq).toBe(120);
  });

  it("continues from the permanent log when the real-time cache no longer holds the start", async () => {
    const short = await openTestBus("stream-short");
    await provisionTestBus(short, { eventsMaxAgeSeconds: 1 });
    try {
      const worker = new WorkerDouble(short, randomUUID(), perMessage);
      const early = await worker.emit(30);
      await persist(db, early);
      // JetStream drops expired messages on its own schedule (about once a second).
      const cache = new JetStreamEvents({ js: short.js, jsm: short.jsm, stream: short.streamName("EVENTS") });
      await waitUntil(async () => (await cache.nextOf(worker.subject, 0)) === null, 10_000, "the cache to expire");
      worker.forgetPosition();
      const late = await worker.emit(10, { last: true });
      await persist(db, late.slice(0, 5)); // the persister is behind: the rest only in the cache
      expect((await cache.nextOf(worker.subject, 0))?.seq).toBe(31);

      const shortStore = storeFor(short);
      const hub = hubFor(worker, { b: short, store: shortStore });
      await hub.ready();
      expect(hub.head).toBe(40);
      const sink = new MemorySink();
      const sub = new Subscription({
        taskId: worker.taskId,
        filter: null,
        resumeAfter: 0,
        sink,
        maxBufferBytes: 1 << 20,
      });
      await replayAndAttach(sub, hub, JOIN);
      expect(sink.events.map((e) => e.seq)).toEqual(range(1, 40));
      // Served byte for byte as published (LLM_PARTIAL has no top-level copies).
      expect(sink.events[0]!.json.toString()).toBe(JSON.stringify(worker.published[0]));
      hub.close();
    } finally {
      await deleteStreamsOf(short);
      await short.close();
    }
  });
});
