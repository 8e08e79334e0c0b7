import { describe, expect, expectTypeOf, it } from "vitest";
import { ValidationError } from "@tog/core";
import {
  EVENT_TYPES,
  buildEvent,
  eventMessageId,
  formatStreamId,
  parseEvent,
  parseResumePoint,
  parseStreamId,
  type TaskEvent,
} from "../src/index.ts";
import { AT, TRACE_ID, sampleEvent } from "./samples.ts";

describe("stream id", () => {
  it("round-trips <millis>-<seq>", () => {
    const id = formatStreamId(1761545276767, 42);
    expect(id).toBe("1761545276767-42");
    expect(parseStreamId(id)).toEqual({ millis: 1761545276767, seq: 42 });
  });

  it("is null for anything that is not <digits>-<digits>", () => {
    for (const bad of ["", "12", "a-1", "1-b", "1-2-3", "-1", "1-", " 1-2", "1.5-2", "99999999999999999-1"]) {
      expect(parseStreamId(bad), bad).toBeNull();
    }
  });
});

describe("resume point", () => {
  it("reads a stream id as 'after its seq'", () => {
    expect(parseResumePoint("1761545276767-7")).toBe(7);
    expect(parseResumePoint("0-12")).toBe(12);
  });

  it("reads a plain number n as seq > n", () => {
    expect(parseResumePoint("5")).toBe(5);
    expect(parseResumePoint(" 5 ")).toBe(5);
    expect(parseResumePoint(String(Number.MAX_SAFE_INTEGER))).toBe(Number.MAX_SAFE_INTEGER);
  });

  it("has no resume point for absent, empty, 0 and a seq-0 stream id", () => {
    expect(parseResumePoint(undefined)).toBeNull();
    expect(parseResumePoint(null)).toBeNull();
    expect(parseResumePoint("")).toBeNull();
    expect(parseResumePoint("   ")).toBeNull();
    expect(parseResumePoint("0")).toBeNull();
    expect(parseResumePoint("1761545276767-0")).toBeNull();
  });

  it.each([
    "abc",
    "-1",
    "-5",
    "1.5",
    "1e3",
    "+3",
    "0x10",
    "1-2-3",
    "1-",
    "-",
    "12a",
    "99999999999999999999",
    "9007199254740993",
  ])("refuses %j with a clear 400 message", (value) => {
    let error: unknown;
    try {
      parseResumePoint(value);
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ValidationError);
    expect((error as Error).message).toBe(
      `Invalid Last-Event-ID: ${JSON.stringify(value)} (expected <millis>-<seq> or a non-negative integer)`,
    );
  });

  it("names the query parameter when asked and shortens long garbage", () => {
    expect(() => parseResumePoint("x", "last_event_id")).toThrow(/^Invalid last_event_id: "x"/);
    const message = (() => {
      try {
        parseResumePoint("y".repeat(500));
      } catch (e) {
        return (e as Error).message;
      }
      return "";
    })();
    expect(message.length).toBeLessThan(150);
  });
});

describe("event envelope", () => {
  it("builds the 6.1 event in the contract's field order, with trace_id", () => {
    const event = sampleEvent("LLM_PARTIAL", 9);
    expect(Object.keys(event)).toEqual([
      "workflow_id",
      "type",
      "agent_id",
      "message",
      "timestamp",
      "seq",
      "stream_id",
      "trace_id",
      "data",
    ]);
    expect(event.timestamp).toBe("2026-01-02T03:04:05.678Z");
    expect(event.stream_id).toBe(`${AT}-9`);
    expect(event.trace_id).toBe(TRACE_ID);
    expect(eventMessageId(event)).toBe("wf-1:9");
  });

  it("takes now as the emit time by default, shared by timestamp and stream id", () => {
    const before = Date.now();
    const event = buildEvent({
      workflow_id: "w",
      type: "PROGRESS",
      agent_id: "a",
      message: "",
      seq: 1,
      trace_id: TRACE_ID,
      data: { percentage: 1, current_step: 0, total_steps: 1, current_task: "" },
    });
    const millis = parseStreamId(event.stream_id)!.millis;
    expect(millis).toBeGreaterThanOrEqual(before);
    expect(Date.parse(event.timestamp)).toBe(millis);
  });

  it.each(EVENT_TYPES)("%s: a built event parses back identical, bytes included", (type) => {
    const event = sampleEvent(type, 3);
    const readBack = parseEvent(JSON.parse(JSON.stringify(event)));
    expect(readBack).toEqual(event);
    expect(JSON.stringify(readBack)).toBe(JSON.stringify(event));
  });

  it("refuses malformed stored events with the failing path", () => {
    const good = sampleEvent("TOOL_INVOKED");
    const cases: [unknown, RegExp][] = [
      [{ ...good, seq: 0 }, /^Invalid event: seq: /],
      [{ ...good, stream_id: "abc" }, /^Invalid event: stream_id: stream_id must be <millis>-<seq>/],
      [{ ...good, trace_id: "XYZ" }, /^Invalid event: trace_id: /],
      [{ ...good, type: "WORKFLOW_FAILED" }, /^Invalid event: type: /],
      [{ ...good, data: { ...good.data, tool_args: 1 } }, /^Invalid event: data\.tool_args: /],
      [{ ...good, extra: true }, /^Invalid event: /],
      [{ ...good, data: undefined }, /^Invalid event: data: /],
      [{ ...good, timestamp: "now" }, /^Invalid event: timestamp: /],
    ];
    for (const [value, message] of cases) expect(() => parseEvent(value)).toThrow(message);
    expect(() => parseEvent("nope")).toThrow(ValidationError);
  });

  it("narrows data by type", () => {
    const event: TaskEvent = sampleEvent("APPROVAL_REQUESTED");
    if (event.type === "APPROVAL_REQUESTED") {
      expectTypeOf(event.data.approval_id).toEqualTypeOf<string>();
      expect(event.data.approval_id).toBe("appr-1");
    }
    expectTypeOf<TaskEvent<"LLM_PARTIAL">["data"]["chunk_index"]>().toEqualTypeOf<number>();
  });
});
