import { describe, expect, it } from "vitest";
import { buildEvent, eventBaseSchema } from "@tog/events";
import { TaskEventSchema, TurnEventSchema } from "../src/index.ts";

// The event responses describe the events of libs/events: the same fields, and a real event fits.

describe("event response schemas", () => {
  const event = buildEvent({
    workflow_id: "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d",
    type: "LLM_OUTPUT",
    agent_id: "generalist",
    message: "done",
    seq: 3,
    trace_id: "0".repeat(32),
    data: { output: "hi", model: "offline-small", tokens_used: 3, cost_usd: 0, duration_ms: 5 },
  });

  it("TaskEvent has exactly the fields of a libs/events event", () => {
    expect(Object.keys(TaskEventSchema.shape).sort()).toEqual(
      [...Object.keys(eventBaseSchema.shape), "type", "data"].sort(),
    );
    expect(TaskEventSchema.parse(event)).toEqual(event);
  });

  it("SessionTurnEvent is that event without stream_id and trace_id", () => {
    const { stream_id: _s, trace_id: _t, ...turn } = event;
    expect(Object.keys(TurnEventSchema.shape).sort()).toEqual(Object.keys(turn).sort());
    expect(TurnEventSchema.parse(turn)).toEqual(turn);
  });
});
