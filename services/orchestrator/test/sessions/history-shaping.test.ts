import { describe, expect, it } from "vitest";
import { estimateTokens, type ChatMessage } from "@tog/providers";
import {
  applyWindow,
  clipTokens,
  shapeHistory,
  SUMMARY_HEADER,
  tokensOf,
  waterLevel,
} from "../../src/sessions/history-shaping.ts";
import { DEFAULT_WINDOW, type WindowSettings } from "../../src/sessions/presets.ts";

/** `turns` question/answer pairs; each content exactly `chars` characters long (chars/4 tokens). */
function conversation(turns: number, chars = 40): ChatMessage[] {
  const out: ChatMessage[] = [];
  for (let i = 1; i <= turns; i++) {
    out.push(
      { role: "user", content: `q${i}:`.padEnd(chars, "q") },
      { role: "assistant", content: `a${i}:`.padEnd(chars, "a") },
    );
  }
  return out;
}

const settings = (over: Partial<WindowSettings> = {}): WindowSettings => ({ ...DEFAULT_WINDOW, ...over });

describe("window", () => {
  it("keeps everything up to history_window_size", () => {
    const all = conversation(25);
    expect(applyWindow(all, settings()).messages).toEqual(all);
  });

  it("a longer session keeps its primers and its latest messages", () => {
    const all = conversation(10); // 20 messages
    const { messages, omitted } = applyWindow(all, settings({ historyWindowSize: 8, primersCount: 3 }));
    expect(omitted).toBe(12);
    expect(messages.map((m) => m.content.slice(0, 3))).toEqual([
      "q1:",
      "a1:",
      "q2:",
      "a8:",
      "q9:",
      "a9:",
      "q10",
      "a10",
    ]);
  });

  it("works on a head-and-tail list given the session's real size", () => {
    const all = conversation(30); // 60 messages
    const partial = [...all.slice(0, 6), ...all.slice(-10)];
    const s = settings({ historyWindowSize: 10, primersCount: 4 });
    expect(applyWindow(partial, s, 60)).toEqual(applyWindow(all, s));
  });
});

describe("compression at the trigger ratio", () => {
  // 10 turns × 2 messages × 100 tokens = 2000 tokens.
  const all = conversation(10, 400);
  const total = tokensOf(all);

  it("leaves a history at exactly trigger × context window alone", () => {
    expect(total).toBe(2_000);
    const shaped = shapeHistory(all, settings({ compressionTriggerRatio: 0.8 }), 2_500); // trigger = 2000
    expect(shaped.compression).toBeUndefined();
    expect(shaped.messages).toEqual(all);
  });

  it("compresses one token above it, down to the target, keeping primers and recents verbatim", () => {
    const s = settings({ compressionTriggerRatio: 0.8, compressionTargetRatio: 0.5, primersCount: 2, recentsCount: 4 });
    const shaped = shapeHistory(all, s, 2_499); // trigger 1999.2 < 2000
    expect(shaped.compression).toMatchObject({ summarized: 14, tokensBefore: 2_000, targetTokens: 1_249 });
    const out = shaped.messages;
    expect(tokensOf(out)).toBeLessThanOrEqual(1_249);
    expect(shaped.compression!.tokensAfter).toBe(tokensOf(out));
    expect(out).toHaveLength(2 + 1 + 4);
    expect(out.slice(0, 2)).toEqual(all.slice(0, 2));
    expect(out.slice(-4)).toEqual(all.slice(-4));
    const summary = out[2]!;
    expect(summary.role).toBe("user");
    expect(summary.content.startsWith(`${SUMMARY_HEADER} (14 messages`)).toBe(true);
    // Every summarized message is named in order, each with its excerpt.
    const lines = summary.content.split("\n").slice(1);
    expect(lines).toHaveLength(14);
    expect(lines[0]).toMatch(/^- user: q2:/);
    expect(lines[13]).toMatch(/^- assistant: a8:/);
  });

  it("is deterministic", () => {
    const s = settings({ compressionTriggerRatio: 0.5, compressionTargetRatio: 0.3, primersCount: 1, recentsCount: 1 });
    expect(shapeHistory(all, s, 300)).toEqual(shapeHistory(all, s, 300));
  });

  it("a target above the trigger still ends below the trigger", () => {
    const s = settings({ compressionTriggerRatio: 0.5, compressionTargetRatio: 1, primersCount: 1, recentsCount: 1 });
    const shaped = shapeHistory(all, s, 3_000);
    expect(shaped.compression!.targetTokens).toBe(1_500);
    expect(tokensOf(shaped.messages)).toBeLessThanOrEqual(1_500);
  });

  it("when primers and recents alone exceed the target, their longest contents are cut", () => {
    const long: ChatMessage[] = [
      { role: "user", content: "x".repeat(4_000) },
      { role: "assistant", content: "short answer" },
      { role: "user", content: "middle".repeat(100) },
      { role: "assistant", content: "y".repeat(4_000) },
    ];
    const s = settings({
      compressionTriggerRatio: 0.5,
      compressionTargetRatio: 0.25,
      primersCount: 2,
      recentsCount: 1,
    });
    const shaped = shapeHistory(long, s, 2_000); // target 500 tokens, history ~2160
    expect(tokensOf(shaped.messages)).toBeLessThanOrEqual(500);
    expect(shaped.messages[1]).toEqual(long[1]); // short ones stay whole
    expect(shaped.messages[0]!.content.endsWith("…")).toBe(true);
    expect(shaped.messages.at(-1)!.content.endsWith("…")).toBe(true);
    expect(shaped.messages[2]!.content).toContain("1 message");
  });

  it("with no middle (everything is a primer or a recent) only cuts", () => {
    const s = settings({
      compressionTriggerRatio: 0.1,
      compressionTargetRatio: 0.1,
      primersCount: 10,
      recentsCount: 10,
    });
    const shaped = shapeHistory(all, s, 10_000);
    expect(shaped.messages).toHaveLength(all.length);
    expect(shaped.compression!.summarized).toBe(0);
    expect(tokensOf(shaped.messages)).toBeLessThanOrEqual(1_000);
  });
});

describe("helpers", () => {
  it("waterLevel shares the budget: short items whole, long ones evenly", () => {
    expect(waterLevel([5, 100, 100], 105)).toBe(50);
    expect(waterLevel([5, 10], 100)).toBe(10);
    expect(waterLevel([10, 10], 0)).toBe(0);
  });

  it("clipTokens never cuts a surrogate pair and lands within the token count", () => {
    const emoji = "😀".repeat(50); // 100 UTF-16 units
    for (let t = 1; t < 25; t++) {
      const clipped = clipTokens(emoji, t);
      expect(estimateTokens(clipped)).toBeLessThanOrEqual(t);
      expect(clipped.isWellFormed()).toBe(true);
    }
    expect(clipTokens("short", 10)).toBe("short");
  });
});
