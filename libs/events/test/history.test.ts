import { describe, expect, it } from "vitest";
import {
  EVENT_TYPES,
  PERSISTED_EXCLUDED_TYPES,
  SESSION_EXCLUDED_TYPES,
  isPersistedType,
  isSessionTurnEventType,
  isTerminalEvent,
  parseEvent,
  terminalErrorData,
  terminalStatusOf,
  toHistoryItem,
  toSessionTurnEvent,
  toSseForm,
  type FailureStatus,
} from "../src/index.ts";
import { sampleEvent } from "./samples.ts";

describe("terminal events", () => {
  it("WORKFLOW_COMPLETED ends a COMPLETED workflow", () => {
    const event = sampleEvent("WORKFLOW_COMPLETED", 12);
    expect(isTerminalEvent(event)).toBe(true);
    expect(terminalStatusOf(event)).toBe("COMPLETED");
    expect(isTerminalEvent(JSON.parse(JSON.stringify(toSseForm(event))))).toBe(true);
  });

  it.each(["FAILED", "TIMEOUT", "CANCELLED"] as FailureStatus[])(
    "a terminal ERROR_OCCURRED ends a %s task",
    (status) => {
      const data = terminalErrorData({
        status,
        error_type: status === "TIMEOUT" ? "TIMEOUT" : status === "CANCELLED" ? "CANCELLED" : "LLM_ERROR",
        error_message: "x",
      });
      const event = parseEvent(sampleEvent("ERROR_OCCURRED", 4, data));
      expect(isTerminalEvent(event)).toBe(true);
      expect(terminalStatusOf(event)).toBe(status);
    },
  );

  it("no other event is terminal: not a recoverable error, not an unrecoverable one without the marker, not AGENT_FAILED", () => {
    for (const type of EVENT_TYPES) {
      if (type === "WORKFLOW_COMPLETED") continue;
      const event = sampleEvent(type);
      expect(isTerminalEvent(event), type).toBe(false);
      expect(terminalStatusOf(event), type).toBeNull();
    }
    const unrecoverable = sampleEvent("ERROR_OCCURRED", 2, {
      ...terminalErrorData({ status: "FAILED", error_type: "LLM_ERROR", error_message: "x" }),
      terminal: undefined,
      status: undefined,
    });
    expect(isTerminalEvent(unrecoverable)).toBe(false);
    expect(isTerminalEvent({ type: "ERROR_OCCURRED" })).toBe(false);
    expect(isTerminalEvent({ type: "ERROR_OCCURRED", data: null })).toBe(false);
    expect(isTerminalEvent({ type: "ERROR_OCCURRED", data: { terminal: "true" } })).toBe(false);
  });
});

describe("history and session shapes", () => {
  it("persists every type, LLM_PARTIAL included", () => {
    expect(PERSISTED_EXCLUDED_TYPES).toEqual([]);
    for (const type of EVENT_TYPES) expect(isPersistedType(type)).toBe(true);
  });

  it("leaves only LLM_PARTIAL out of session turns", () => {
    expect(SESSION_EXCLUDED_TYPES).toEqual(["LLM_PARTIAL"]);
    expect(EVENT_TYPES.filter((t) => !isSessionTurnEventType(t))).toEqual(["LLM_PARTIAL"]);
  });

  it("a history item is the 6.1 event, without the SSE-only copies", () => {
    const event = sampleEvent("TOOL_INVOKED", 6);
    const item = toHistoryItem(toSseForm(event));
    expect(item).toEqual(event);
    expect(Object.keys(item)).toEqual([
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
    expect(item).not.toHaveProperty("tool");
  });

  it("a session turn event has workflow_id, type, message, timestamp only", () => {
    const event = sampleEvent("LLM_OUTPUT", 8);
    expect(toSessionTurnEvent(event)).toEqual({
      workflow_id: "wf-1",
      type: "LLM_OUTPUT",
      message: "sample LLM_OUTPUT",
      timestamp: "2026-01-02T03:04:05.678Z",
    });
  });
});
