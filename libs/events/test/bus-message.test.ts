import { describe, expect, it } from "vitest";
import {
  eventMessageId,
  eventsMessageId,
  eventsMessageOf,
  eventTextsOf,
  firstEventTextOf,
  lastEventTextOf,
} from "../src/index.ts";
import { sampleEvent } from "./samples.ts";

// One message per write (docs/decisions.md "One message per write").
describe("a message of events", () => {
  const events = [1, 2, 3].map((seq) =>
    sampleEvent("LLM_PARTIAL", seq, {
      chunk: `line\nbreak "quoted" \\ é 🌍 ${seq}`,
      chunk_index: seq,
      total_tokens_so_far: seq,
    }),
  );
  const texts = events.map((e) => JSON.stringify(e));

  it("gives back exactly the texts it joined, even when their values hold line breaks", () => {
    const message = eventsMessageOf(texts);
    expect(eventTextsOf(message)).toEqual(texts);
    expect(firstEventTextOf(message)).toBe(texts[0]);
    expect(lastEventTextOf(message)).toBe(texts[2]);
    expect(eventTextsOf(message).map((t) => JSON.parse(t))).toEqual(events);
  });

  it("of one event is that event's text, as earlier releases published it", () => {
    expect(eventsMessageOf([texts[0]!])).toBe(texts[0]);
    expect(eventTextsOf(texts[0]!)).toEqual([texts[0]]);
    expect(firstEventTextOf(texts[0]!)).toBe(texts[0]);
    expect(lastEventTextOf(texts[0]!)).toBe(texts[0]);
  });

  it("has a msg id per event range; one event keeps its event's id", () => {
    expect(eventsMessageId([events[0]!])).toBe(eventMessageId(events[0]!));
    expect(eventsMessageId(events)).toBe(`${events[0]!.workflow_id}:1-3`);
    expect(eventsMessageId(events.slice(1))).not.toBe(eventsMessageId(events));
    expect(() => eventsMessageId([])).toThrow();
  });
});
