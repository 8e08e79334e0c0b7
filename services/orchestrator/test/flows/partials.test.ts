import { describe, expect, it } from "vitest";
import {
  PARTIAL_MAX_WAIT_MS,
  PARTIAL_MIN_CHARS,
  PARTIAL_MIN_INTERVAL_MS,
  partialEmitter,
} from "../../src/flows/index.ts";

// How stream deltas become LLM_PARTIAL events (flows/model-call.ts): the first as soon as it is
// long enough, then at most one per PARTIAL_MIN_INTERVAL_MS, a slow stream's text after
// PARTIAL_MAX_WAIT_MS, the rest at the end; the chunks always add up to the text.

function run(deltas: Array<{ at: number; text: string }>, endAt: number) {
  let clock = 0;
  const chunks: Array<{ chunk: string; index: number; at: number }> = [];
  const p = partialEmitter(
    (chunk, index) => chunks.push({ chunk, index, at: clock }),
    () => clock,
  );
  let tokens = 0;
  for (const d of deltas) {
    clock = d.at;
    p.push({ text: d.text, totalTokensSoFar: ++tokens } as never);
  }
  clock = endAt;
  p.flush();
  expect(chunks.map((c) => c.chunk).join("")).toBe(deltas.map((d) => d.text).join(""));
  expect(chunks.map((c) => c.index)).toEqual(chunks.map((_, i) => i));
  return chunks;
}

describe("LLM_PARTIAL coalescing", () => {
  it("a burst of deltas (a fast model, the offline provider) gives the first chunk at once and the rest as one", () => {
    const deltas = Array.from({ length: 20 }, () => ({ at: 0, text: "x".repeat(10) }));
    const chunks = run(deltas, 1);
    expect(chunks).toHaveLength(2);
    expect(chunks[0]!.chunk.length).toBeGreaterThanOrEqual(PARTIAL_MIN_CHARS);
    expect(chunks[0]!.at).toBe(0);
  });

  it("a steady stream gives a chunk per interval, never two closer than PARTIAL_MIN_INTERVAL_MS", () => {
    const deltas = Array.from({ length: 100 }, (_, i) => ({ at: i * 5, text: "abcdefgh" }));
    const chunks = run(deltas, 500);
    const gaps = chunks.slice(1, -1).map((c, i) => c.at - chunks[i]!.at);
    for (const gap of gaps) expect(gap).toBeGreaterThanOrEqual(PARTIAL_MIN_INTERVAL_MS);
    // 500 ms of text: about one chunk per interval, not one per 32 characters (25).
    expect(chunks.length).toBeGreaterThanOrEqual(8);
    expect(chunks.length).toBeLessThanOrEqual(500 / PARTIAL_MIN_INTERVAL_MS + 2);
  });

  it("a slow stream's short deltas still go out after PARTIAL_MAX_WAIT_MS", () => {
    const deltas = Array.from({ length: 4 }, (_, i) => ({ at: (i + 1) * (PARTIAL_MAX_WAIT_MS + 10), text: "hi " }));
    const chunks = run(deltas, 2_000);
    expect(chunks.map((c) => c.chunk)).toEqual(["hi ", "hi ", "hi ", "hi "]);
  });
});
