import { describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { decodeHubEvent } from "../src/hub/hub-event.ts";
import { streamRequestFromQuery } from "../src/stream-request.ts";
import { closeReason, refusalCode } from "../src/ws/ws-close.ts";
import { parseClientMessage } from "../src/ws/ws-protocol.ts";
import { makeEvent } from "./support.ts";

const WF = "7D0C2F3E-5B7A-4C1E-9A55-0D6F0F1B2C3D";
const wf = WF.toLowerCase();

describe("stream requests (SSE query, WebSocket handshake)", () => {
  it("normalizes the task id and reads the filter and both resume forms", () => {
    expect(streamRequestFromQuery({ workflow_id: WF }, undefined)).toEqual({
      taskId: wf,
      filter: null,
      resumeAfter: 0,
    });
    const r = streamRequestFromQuery(
      { workflow_id: wf, types: "LLM_OUTPUT, PROGRESS", last_event_id: "1767225600000-42" },
      undefined,
    );
    expect([...r.filter!]).toEqual(["LLM_OUTPUT", "PROGRESS"]);
    expect(r.resumeAfter).toBe(42);
    expect(streamRequestFromQuery({ workflow_id: wf, last_event_id: "7" }, undefined).resumeAfter).toBe(7);
  });

  it("lets Last-Event-ID win over the query, an empty header meaning absent", () => {
    expect(streamRequestFromQuery({ workflow_id: wf, last_event_id: "3" }, "1-9").resumeAfter).toBe(9);
    expect(streamRequestFromQuery({ workflow_id: wf, last_event_id: "3" }, " ").resumeAfter).toBe(3);
    expect(streamRequestFromQuery({ workflow_id: wf, last_event_id: "3" }, "0").resumeAfter).toBe(0);
  });

  it("refuses what it cannot read, naming the parameter", () => {
    const bad: [Record<string, unknown>, string | undefined, string][] = [
      [{}, undefined, "workflow_id is required"],
      [{ workflow_id: " " }, undefined, "workflow_id is required"],
      [{ workflow_id: [wf, wf] }, undefined, "Invalid workflow_id parameter: give it once"],
      [{ workflow_id: wf, types: "NOPE" }, undefined, 'Invalid types: unknown event type "NOPE"'],
      [
        { workflow_id: wf, last_event_id: "x" },
        undefined,
        'Invalid last_event_id: "x" (expected <millis>-<seq> or a non-negative integer)',
      ],
      [{ workflow_id: wf }, "1.5", 'Invalid Last-Event-ID: "1.5" (expected <millis>-<seq> or a non-negative integer)'],
      // A malformed query value is refused even when the header decides.
      [
        { workflow_id: wf, last_event_id: "-3" },
        "4",
        'Invalid last_event_id: "-3" (expected <millis>-<seq> or a non-negative integer)',
      ],
    ];
    for (const [query, header, message] of bad) {
      expect(() => streamRequestFromQuery(query, header)).toThrow(new ValidationError(message));
    }
  });
});

describe("WebSocket client messages", () => {
  it("parses subscribe (types as array or string, resume as id or number), unsubscribe and ping", () => {
    expect(parseClientMessage(JSON.stringify({ type: "ping", extra: 1 }))).toEqual({ type: "ping" });
    expect(parseClientMessage(JSON.stringify({ type: "unsubscribe", workflow_id: WF }))).toEqual({
      type: "unsubscribe",
      taskId: wf,
    });
    const a = parseClientMessage(
      JSON.stringify({ type: "subscribe", workflow_id: wf, types: ["LLM_OUTPUT"], last_event_id: 5 }),
    );
    expect(a).toMatchObject({ type: "subscribe", taskId: wf, resumeAfter: 5 });
    const b = parseClientMessage(
      JSON.stringify({ type: "subscribe", workflow_id: wf, types: "LLM_OUTPUT,PROGRESS", last_event_id: "17-8" }),
    );
    expect(b).toMatchObject({ resumeAfter: 8 });
    expect(
      parseClientMessage(JSON.stringify({ type: "subscribe", workflow_id: wf, types: null, last_event_id: null })),
    ).toEqual({
      type: "subscribe",
      taskId: wf,
      filter: null,
      resumeAfter: 0,
    });
  });

  it("says what is wrong with a bad message", () => {
    const cases: [string, string][] = [
      ["{", "Invalid message: not JSON"],
      ["null", 'Invalid message: expected a JSON object with a "type"'],
      ['{"type":1}', 'Invalid message: "type" is required'],
      ['{"type":"SUBSCRIBE"}', 'Unknown message type: "SUBSCRIBE" (expected subscribe, unsubscribe, ping)'],
      ['{"type":"subscribe","workflow_id":5}', "Invalid workflow_id parameter: expected one string"],
      [
        `{"type":"subscribe","workflow_id":"${wf}","types":[1]}`,
        "Invalid types: expected a comma-separated string or an array of event type names",
      ],
      [
        `{"type":"subscribe","workflow_id":"${wf}","last_event_id":-1}`,
        "Invalid last_event_id: -1 (expected <millis>-<seq> or a non-negative integer)",
      ],
      [
        `{"type":"subscribe","workflow_id":"${wf}","last_event_id":true}`,
        "Invalid last_event_id: expected <millis>-<seq> or a non-negative integer",
      ],
    ];
    for (const [text, message] of cases)
      expect(() => parseClientMessage(text), text).toThrow(new ValidationError(message));
  });
});

describe("WebSocket refusals (close code and reason, never a message)", () => {
  it("maps an HTTP status to 4000 + status, and a 500 to 1011", () => {
    expect([400, 404, 429, 502, 503].map(refusalCode)).toEqual([4400, 4404, 4429, 4502, 4503]);
    expect(refusalCode(500)).toBe(1011);
    expect(refusalCode(200)).toBe(1011);
  });

  it("names the task when it fits the 123 bytes of a close reason, else cuts the message", () => {
    expect(closeReason("Task not found", "abc")).toBe("Task not found (workflow_id abc)");
    expect(closeReason("Invalid message: not JSON")).toBe("Invalid message: not JSON");
    const longId = "w".repeat(128);
    expect(closeReason("Task not found", longId)).toBe("Task not found");
    const long = closeReason(`Unknown message type: "${"é".repeat(100)}"`);
    expect(Buffer.byteLength(long)).toBeLessThanOrEqual(123);
    expect(long.endsWith("…")).toBe(true);
    expect(long.startsWith('Unknown message type: "éé')).toBe(true);
  });
});

describe("hub events", () => {
  it("keeps the published text when the stream form adds nothing, and frames it once", () => {
    const event = makeEvent(wf, 3);
    const text = JSON.stringify(event);
    const decoded = decodeHubEvent(text, wf)!;
    expect(decoded.json.toString()).toBe(text);
    expect(decoded.sse.toString()).toBe(`id: ${event.stream_id}\nevent: ${event.type}\ndata: ${text}\n\n`);
    expect(decoded.json.buffer).toBe(decoded.sse.buffer);
    expect(decoded.terminal).toBe(false);
  });

  it("adds the top-level copies of the SSE form and marks terminal events", () => {
    const done = decodeHubEvent(JSON.stringify(makeEvent(wf, 9, { last: true })), wf)!;
    expect(JSON.parse(done.json.toString())).toMatchObject({ result: "the answer", status: "COMPLETED" });
    expect(done.terminal).toBe(true);
    const failed = decodeHubEvent(JSON.stringify(makeEvent(wf, 9, { failed: true })), wf)!;
    expect(JSON.parse(failed.json.toString())).toMatchObject({ status: "FAILED" });
    expect(failed.terminal).toBe(true);
  });

  it("rejects what is not an event of the task", () => {
    const text = JSON.stringify(makeEvent(wf, 1));
    expect(decodeHubEvent(text, "other")).toBeNull();
    expect(decodeHubEvent("{", wf)).toBeNull();
    expect(decodeHubEvent(JSON.stringify({ ...makeEvent(wf, 1), stream_id: "x\nevil" }), wf)).toBeNull();
    expect(decodeHubEvent(JSON.stringify({ ...makeEvent(wf, 1), type: "A\nB" }), wf)).toBeNull();
    // Pretty-printed text is re-serialized onto one data line.
    const pretty = decodeHubEvent(JSON.stringify(makeEvent(wf, 2), null, 2), wf)!;
    expect(pretty.json.toString()).not.toContain("\n");
  });
});
