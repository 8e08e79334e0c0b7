import { describe, expect, it } from "vitest";
import {
  EVENT_TYPES,
  encodeEvent,
  encodeSseFrame,
  encodeWsFrame,
  sseFrameFromJson,
  terminalErrorData,
  toSseForm,
  type EventType,
} from "../src/index.ts";
import { AT, TRACE_ID, sampleEvent } from "./samples.ts";

// Top-level copies expected in the SSE form of each type (6.1's note and 6.2's "SSE form").
const TOP_LEVEL: Partial<Record<EventType, Record<string, unknown>>> = {
  WORKFLOW_COMPLETED: { result: "4", status: "COMPLETED" },
  AGENT_COMPLETED: { result: "4" },
  TOOL_INVOKED: { tool: "calculator", params: { expression: "2+2" } },
  TOOL_OBSERVATION: { tool: "calculator", result: 4 },
};

const BASE_KEYS = ["workflow_id", "type", "agent_id", "message", "timestamp", "seq", "stream_id", "trace_id", "data"];

describe("SSE form", () => {
  it.each(EVENT_TYPES)("%s: carries the event plus exactly its top-level fields", (type) => {
    const event = sampleEvent(type, 2);
    const form = toSseForm(event) as unknown as Record<string, unknown>;
    const extra = TOP_LEVEL[type] ?? {};
    expect(Object.keys(form)).toEqual([...BASE_KEYS, ...Object.keys(extra)]);
    expect(form).toEqual({ ...event, ...extra });
    expect(form.agent_id).toBe("simple-agent");
  });

  it("adds status to a terminal ERROR_OCCURRED only", () => {
    const failed = sampleEvent(
      "ERROR_OCCURRED",
      5,
      terminalErrorData({ status: "CANCELLED", error_type: "CANCELLED", error_message: "Cancelled by user" }),
    );
    expect(toSseForm(failed)).toEqual({ ...failed, status: "CANCELLED" });
    expect(toSseForm(sampleEvent("ERROR_OCCURRED"))).not.toHaveProperty("status");
  });

  it("does not modify the event", () => {
    const event = sampleEvent("TOOL_INVOKED");
    const copy = structuredClone(event);
    toSseForm(event);
    expect(event).toEqual(copy);
  });
});

describe("frames", () => {
  it("encodes the exact SSE bytes", () => {
    const event = sampleEvent("AGENT_COMPLETED", 7);
    const json =
      `{"workflow_id":"wf-1","type":"AGENT_COMPLETED","agent_id":"simple-agent","message":"sample AGENT_COMPLETED",` +
      `"timestamp":"2026-01-02T03:04:05.678Z","seq":7,"stream_id":"${AT}-7","trace_id":"${TRACE_ID}",` +
      `"data":{"result":"4","tokens_used":42,"cost_usd":0.0001,"duration_ms":100},"result":"4"}`;
    const expected = `id: ${AT}-7\nevent: AGENT_COMPLETED\ndata: ${json}\n\n`;
    const frame = encodeSseFrame(event);
    expect(Buffer.isBuffer(frame)).toBe(true);
    expect(frame.toString("utf8")).toBe(expected);
    expect(encodeWsFrame(event)).toBe(json);
  });

  it("keeps multi-line and non-ASCII text on the single data line", () => {
    const event = sampleEvent("LLM_PARTIAL", 3, {
      chunk: "line 1\nline 2\r\n\u2028é😀",
      chunk_index: 4,
      total_tokens_so_far: 9,
    });
    const text = encodeSseFrame(event).toString("utf8");
    const lines = text.split("\n");
    expect(lines).toHaveLength(5);
    expect(lines.slice(3)).toEqual(["", ""]);
    expect(text).not.toContain("\r");
    expect(JSON.parse(lines[2]!.slice("data: ".length)).data.chunk).toBe("line 1\nline 2\r\n\u2028é😀");
  });

  it("encodes once for every client: one JSON for WebSocket and the SSE frame", () => {
    const event = sampleEvent("TOOL_OBSERVATION", 11);
    const encoded = encodeEvent(event);
    expect(encoded.seq).toBe(11);
    expect(encoded.type).toBe("TOOL_OBSERVATION");
    expect(encoded.json).toBe(encodeWsFrame(event));
    expect(encoded.sse.equals(encodeSseFrame(event))).toBe(true);
    expect(encoded.sse.equals(sseFrameFromJson(event.stream_id, event.type, encoded.json))).toBe(true);
    expect(JSON.parse(encoded.json)).toEqual(toSseForm(event));
  });
});
