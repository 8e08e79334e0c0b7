import { describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import {
  AGENT_FAILED,
  EVENT_CATEGORIES,
  EVENT_CATEGORY,
  EVENT_TYPES,
  NEVER_EMITTED_EVENT_TYPES,
  SPEC_EVENT_TYPES,
  isEventType,
  parseEventTypeFilter,
} from "../src/index.ts";

describe("event type list", () => {
  it("holds exactly the 26 types of 6.2 plus AGENT_FAILED, without duplicates", () => {
    expect(SPEC_EVENT_TYPES).toHaveLength(26);
    expect(new Set(SPEC_EVENT_TYPES).size).toBe(26);
    expect(SPEC_EVENT_TYPES).not.toContain(AGENT_FAILED);
    expect(EVENT_TYPES).toEqual([...SPEC_EVENT_TYPES, "AGENT_FAILED"]);
    expect(new Set(EVENT_TYPES).size).toBe(27);
  });

  it("contains none of the names 6.3 rule 1 says are never emitted, nor STATUS_UPDATE", () => {
    expect(NEVER_EMITTED_EVENT_TYPES).toEqual([
      "WORKFLOW_FAILED",
      "TASK_COMPLETED",
      "TOOL_COMPLETED",
      "TOOL_FAILED",
      "BUDGET_UPDATE",
    ]);
    for (const name of [...NEVER_EMITTED_EVENT_TYPES, "STATUS_UPDATE"]) {
      expect(EVENT_TYPES as readonly string[]).not.toContain(name);
      expect(isEventType(name)).toBe(false);
    }
  });

  it("gives every type the category of 6.2", () => {
    expect(Object.keys(EVENT_CATEGORY).sort()).toEqual([...EVENT_TYPES].sort());
    for (const type of EVENT_TYPES) expect(EVENT_CATEGORIES).toContain(EVENT_CATEGORY[type]);
    expect(EVENT_CATEGORY.WORKFLOW_COMPLETED).toBe("Workflow");
    expect(EVENT_CATEGORY.DEPENDENCY_SATISFIED).toBe("Team");
    expect(EVENT_CATEGORY.WAITING).toBe("Progress");
    expect(EVENT_CATEGORY.DELEGATION).toBe("System");
    expect(EVENT_CATEGORY.AGENT_FAILED).toBe("Agent");
  });

  it("matches type names exactly and case-sensitively", () => {
    expect(isEventType("LLM_OUTPUT")).toBe(true);
    expect(isEventType("llm_output")).toBe(false);
    expect(isEventType(" LLM_OUTPUT")).toBe(false);
    expect(isEventType(42)).toBe(false);
  });
});

describe("types filter", () => {
  it("is no filter when absent or empty", () => {
    expect(parseEventTypeFilter(undefined)).toBeNull();
    expect(parseEventTypeFilter(null)).toBeNull();
    expect(parseEventTypeFilter("")).toBeNull();
    expect(parseEventTypeFilter(" , ")).toBeNull();
    expect(parseEventTypeFilter([])).toBeNull();
  });

  it("parses the SSE comma form and the WebSocket array form, including AGENT_FAILED", () => {
    expect([...parseEventTypeFilter("LLM_OUTPUT, WORKFLOW_COMPLETED,AGENT_FAILED")!]).toEqual([
      "LLM_OUTPUT",
      "WORKFLOW_COMPLETED",
      "AGENT_FAILED",
    ]);
    expect([...parseEventTypeFilter(["TOOL_INVOKED", "TOOL_INVOKED"])!]).toEqual(["TOOL_INVOKED"]);
  });

  it("refuses unknown, lower-case and never-emitted names, naming each of them", () => {
    expect(() => parseEventTypeFilter("LLM_OUTPUT,llm_partial,WORKFLOW_FAILED")).toThrow(ValidationError);
    expect(() => parseEventTypeFilter("LLM_OUTPUT,llm_partial,WORKFLOW_FAILED")).toThrow(
      'Invalid types: unknown event type "llm_partial", "WORKFLOW_FAILED"',
    );
    expect(() => parseEventTypeFilter(["STATUS_UPDATE"])).toThrow('Invalid types: unknown event type "STATUS_UPDATE"');
  });

  it("refuses a value that is neither a string nor an array of strings", () => {
    expect(() => parseEventTypeFilter(["LLM_OUTPUT", 3])).toThrow(ValidationError);
    expect(() => parseEventTypeFilter({ types: "LLM_OUTPUT" })).toThrow(/^Invalid types: expected/);
  });
});
