import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConflictError, initTelemetry, parseTraceparent, trace, withSpan } from "@tog/core";
import {
  ensureConsumers,
  ensureStreams,
  eventPersisterConsumer,
  eventsStream,
  extractMessageContext,
  publish,
  publishCore,
  systemSubjects,
  withMessageContext,
  type Bus,
} from "@tog/bus";
import { headers as natsHeaders, type Msg } from "@nats-io/transport-node";
import { deleteStreamsOf, openTestBus } from "./helpers.ts";

describe("publish", () => {
  let bus: Bus;
  let stream: string;
  let subjects: ReturnType<typeof systemSubjects>;
  beforeAll(async () => {
    initTelemetry({ serviceName: "bus-test" });
    bus = await openTestBus("buspub");
    subjects = systemSubjects(bus.prefix);
    stream = bus.streamName("EVENTS");
    await ensureStreams(bus, [eventsStream({ prefix: bus.prefix })]);
  });
  afterAll(async () => {
    await deleteStreamsOf(bus);
    await bus.close();
  });

  const storedOn = async (subject: string) =>
    (await bus.jsm.streams.info(stream, { subjects_filter: subject })).state.subjects?.[subject] ?? 0;

  it("JSON-encodes objects once and stores them on the per-task subject", async () => {
    const ack = await publish(bus, subjects.events("wf-json"), { type: "WORKFLOW_STARTED", seq: 1, data: { a: "ü" } });
    expect(ack).toMatchObject({ stream, duplicate: false });
    const stored = await bus.jsm.streams.getMessage(stream, { seq: ack.seq });
    expect(stored?.subject).toBe(`${bus.prefix}.events.wf-json`);
    expect(stored?.json()).toEqual({ type: "WORKFLOW_STARTED", seq: 1, data: { a: "ü" } });

    const raw = new TextEncoder().encode("raw-bytes");
    const rawAck = await publish(bus, subjects.events("wf-json"), raw, { headers: { "x-kind": "raw" } });
    const rawStored = await bus.jsm.streams.getMessage(stream, { seq: rawAck.seq });
    expect(rawStored?.string()).toBe("raw-bytes");
    expect(rawStored?.header.get("x-kind")).toBe("raw");
  });

  it("dedupes by msgID: the repeat is acked as duplicate and stored once", async () => {
    const subject = subjects.events("wf-dedupe");
    const first = await publish(bus, subject, { n: 1 }, { msgID: "wf-dedupe:1" });
    const again = await publish(bus, subject, { n: 1 }, { msgID: "wf-dedupe:1" });
    expect(first.duplicate).toBe(false);
    expect(again).toEqual({ stream, seq: first.seq, duplicate: true });
    const other = await publish(bus, subject, { n: 2 }, { msgID: "wf-dedupe:2" });
    expect(other.duplicate).toBe(false);
    expect(other.seq).toBeGreaterThan(first.seq);
    expect(await storedOn(subject)).toBe(2);
    const stored = await bus.jsm.streams.getMessage(stream, { seq: first.seq });
    expect(stored?.header.get("Nats-Msg-Id")).toBe("wf-dedupe:1");
  });

  it("expect.lastSubjectSequence is a compare-and-set per subject", async () => {
    const subject = subjects.events("wf-cas");
    const a = await publish(bus, subject, { seq: 1 }, { expect: { lastSubjectSequence: 0 } });
    // Writes to other tasks in between do not disturb this subject's expectation.
    await publish(bus, subjects.events("wf-cas-other"), { x: 1 });
    const b = await publish(bus, subject, { seq: 2 }, { expect: { lastSubjectSequence: a.seq } });
    expect(b.seq).toBeGreaterThan(a.seq);

    const stale = publish(bus, subject, { seq: 2 }, { expect: { lastSubjectSequence: a.seq } });
    await expect(stale).rejects.toBeInstanceOf(ConflictError);
    await expect(stale).rejects.toThrow(/wrong last sequence/);
    // 0 means "no message on this subject yet": a second "first" event is refused.
    await expect(publish(bus, subject, { seq: 1 }, { expect: { lastSubjectSequence: 0 } })).rejects.toBeInstanceOf(
      ConflictError,
    );
    const fresh = publish(bus, subjects.events("wf-cas-new"), { seq: 1 }, { expect: { lastSubjectSequence: 5 } });
    await expect(fresh).rejects.toBeInstanceOf(ConflictError);
    expect(await storedOn(subject)).toBe(2);
  });

  it("carries the active span's traceparent, and the receiver continues that trace", async () => {
    const subject = subjects.events("wf-trace");
    const { traceId, seq } = await withSpan("test.publish", async (span) => {
      const ack = await publish(bus, subject, { hello: "trace" });
      return { traceId: span.spanContext().traceId, seq: ack.seq };
    });
    const stored = await bus.jsm.streams.getMessage(stream, { seq });
    const tp = parseTraceparent(stored?.header.get("traceparent"));
    expect(tp?.traceId).toBe(traceId);

    // Receive through the durable persister consumer, filtered to this task's message.
    await ensureConsumers(bus, [
      { ...eventPersisterConsumer({ prefix: bus.prefix }), durable: "trace-reader", filterSubject: subject },
    ]);
    const consumer = await bus.js.consumers.get(stream, "trace-reader");
    const msg = await consumer.next({ expires: 5_000 });
    expect(msg?.seq).toBe(seq);
    expect(trace.getSpanContext(extractMessageContext(msg!))?.traceId).toBe(traceId);
    const inside = await withMessageContext(msg!, (span) => {
      msg!.ack();
      return span.spanContext();
    });
    expect(inside.traceId).toBe(traceId);
    expect(inside.spanId).not.toBe(tp?.parentId);
  });

  it("core publish carries trace headers too; a malformed traceparent starts a new trace", async () => {
    const subject = bus.subject("core", "ping");
    const received = new Promise<Msg>((resolve) => {
      const sub = bus.nc.subscribe(subject, { max: 1, callback: (_err, m) => resolve(m) });
      void sub;
    });
    await bus.nc.flush();
    const traceId = await withSpan("test.core", (span) => {
      publishCore(bus, subject, { ping: true }, { headers: { "x-extra": "1" } });
      return span.spanContext().traceId;
    });
    const msg = await received;
    expect(msg.json()).toEqual({ ping: true });
    expect(msg.headers?.get("x-extra")).toBe("1");
    expect(trace.getSpanContext(extractMessageContext(msg))?.traceId).toBe(traceId);

    const bad = natsHeaders();
    bad.set("traceparent", "00-00000000000000000000000000000000-0000000000000000-01");
    expect(trace.getSpanContext(extractMessageContext({ subject, headers: bad }))).toBeUndefined();
    const fresh = await withMessageContext({ subject, headers: bad }, (span) => span.spanContext().traceId);
    expect(fresh).toMatch(/^[0-9a-f]{32}$/);
    expect(fresh).not.toBe(traceId);
  });
});
