import { describe, expect, it } from "vitest";
import { createTextTool, createToolRegistry } from "../src/index.ts";
import { fails, ok } from "./helpers.ts";

const FAMILY = "👨‍👩‍👧"; // one grapheme, five code points (three emoji joined by ZWJ)
const FLAG = "🇩🇪"; // one grapheme, two regional-indicator code points
const E_ACUTE = "e\u0301"; // e + combining acute accent: one grapheme, two code points

describe("text", () => {
  it("counts code points, graphemes, words, lines and bytes", async () => {
    expect(await ok("text", { operation: "count", text: `Hi ${FAMILY} caf${E_ACUTE} ${FLAG}!` })).toEqual({
      characters: 3 + 5 + 1 + 5 + 1 + 2 + 1,
      graphemes: 3 + 1 + 1 + 4 + 1 + 1 + 1,
      words: 2,
      lines: 1,
      bytes_utf8: Buffer.byteLength(`Hi ${FAMILY} caf${E_ACUTE} ${FLAG}!`),
    });
    expect(await ok("text", { operation: "count", text: "" })).toMatchObject({ characters: 0, words: 0, lines: 0 });
    expect((await ok("text", { operation: "count", text: "a\nb\r\nc" })).lines).toBe(3);
    expect((await ok("text", { operation: "count", text: "a\nb\n" })).lines).toBe(2);
    expect((await ok("text", { operation: "count", text: "\n\n" })).lines).toBe(2);
    expect((await ok("text", { operation: "count", text: "It's a well-known fact, isn't it? 42 times." })).words).toBe(
      9,
    );
    expect((await ok("text", { operation: "count", text: "日本語のテキスト" })).characters).toBe(8);
  });

  it.each([
    ["upper", "straße", "STRASSE"],
    ["lower", "ÀÉÎ", "àéî"],
    ["title", "the quick-brown fox's tale", "The Quick-Brown Fox's Tale"],
    ["sentence", "HELLO THERE! HOW ARE YOU? FINE. 3 APPLES.", "Hello there! How are you? Fine. 3 apples."],
    ["camel", "Hello big World", "helloBigWorld"],
    ["pascal", "hello_big world", "HelloBigWorld"],
    ["snake", "helloBigWorld HTTPServer", "hello_big_world_http_server"],
    ["kebab", "Hello Big_World", "hello-big-world"],
    ["constant", "max retry count", "MAX_RETRY_COUNT"],
  ] as const)("case %s: %s → %s", async (to, text, expected) => {
    expect(await ok("text", { operation: "case", text, to })).toEqual({ text: expected });
  });

  it("case follows the locale when one is given", async () => {
    expect((await ok("text", { operation: "case", text: "istanbul", to: "upper", locale: "tr" })).text).toBe(
      "İSTANBUL",
    );
    expect((await ok("text", { operation: "case", text: "istanbul", to: "upper" })).text).toBe("ISTANBUL");
    expect((await fails("text", { operation: "case", text: "x", to: "upper", locale: "??" })).error.message).toContain(
      'locale: "??" is not a BCP 47 language tag',
    );
  });

  it("extracts matches with groups and code-point offsets", async () => {
    const data = await ok("text", {
      operation: "extract",
      text: `${FAMILY} order #12 and #345, total 7`,
      pattern: "#(?<id>\\d+)",
    });
    expect(data).toEqual({
      count: 2,
      matches: [
        { match: "#12", index: 12, groups: ["12"], named: { id: "12" } },
        { match: "#345", index: 20, groups: ["345"], named: { id: "345" } },
      ],
    });
    const limited = await ok("text", { operation: "extract", text: "a1 b2 c3", pattern: "[a-z]\\d", max_matches: 2 });
    expect(limited.matches.map((m: { match: string }) => m.match)).toEqual(["a1", "b2"]);
    const insensitive = await ok("text", { operation: "extract", text: "Cat cat CAT", pattern: "cat", flags: "i" });
    expect(insensitive.count).toBe(3);
    expect((await ok("text", { operation: "extract", text: "abc", pattern: "\\d" })).matches).toEqual([]);
  });

  it("stops a catastrophic-backtracking pattern instead of hanging", async () => {
    const tool = createTextTool({ regexTimeoutMs: 100 });
    const registry = createToolRegistry([tool]);
    const started = performance.now();
    const outcome = await registry.invoke("text", {
      operation: "extract",
      text: `${"a".repeat(40)}!`,
      pattern: "^(a+)+$",
    });
    expect(performance.now() - started).toBeLessThan(2_000);
    expect(outcome.ok).toBe(false);
    if (!outcome.ok) {
      expect(outcome.errorType).toBe("INVALID_INPUT");
      expect(outcome.error.message).toContain("took longer than 100 ms");
    }
    // The shared sandbox still works afterwards.
    expect((await registry.invoke("text", { operation: "extract", text: "x1", pattern: "\\d" })).ok).toBe(true);
  });

  it("refuses bad patterns, flags and oversized input", async () => {
    expect((await fails("text", { operation: "extract", text: "x", pattern: "(" })).error.message).toContain(
      "pattern: Invalid regular expression",
    );
    expect(
      (await fails("text", { operation: "extract", text: "x", pattern: "a", flags: "gg" })).error.message,
    ).toContain("flags: Only the flags");
    expect(
      (await fails("text", { operation: "extract", text: "x", pattern: "a", flags: "y" })).error.message,
    ).toContain("flags: Only the flags");
    expect(
      (await fails("text", { operation: "extract", text: "x", pattern: "a", flags: "uv" })).error.message,
    ).toContain("cannot be combined");
    expect(
      (await fails("text", { operation: "extract", text: "x", pattern: "a".repeat(1_001) })).error.message,
    ).toContain("pattern:");
    expect((await fails("text", { operation: "count", text: "x".repeat(1_000_001) })).error.message).toContain("text:");
    expect((await fails("text", { operation: "extract", text: "x" })).error.message).toContain(
      'pattern: Required for operation "extract"',
    );
  });

  it("replaces with regex back-references or literally", async () => {
    expect(
      await ok("text", {
        operation: "replace",
        text: "2024-03-30 and 2025-01-02",
        pattern: "(\\d+)-(\\d+)-(\\d+)",
        replacement: "$3.$2.$1",
      }),
    ).toEqual({ text: "30.03.2024 and 02.01.2025", replacements: 2 });
    expect(
      await ok("text", { operation: "replace", text: "a-b-c", pattern: "-", replacement: "+", all: false }),
    ).toEqual({ text: "a+b-c", replacements: 1 });
    expect(
      await ok("text", {
        operation: "replace",
        text: "cost (USD) = $5 (USD)",
        pattern: "(USD)",
        replacement: "$1 €",
        literal: true,
      }),
    ).toEqual({ text: "cost $1 € = $5 $1 €", replacements: 2 });
    expect(
      await ok("text", { operation: "replace", text: "a.b.c-d", pattern: ".", replacement: "/", literal: true }),
    ).toEqual({ text: "a/b/c-d", replacements: 2 });
    expect(
      await ok("text", {
        operation: "replace",
        text: `${FAMILY}x${FAMILY}`,
        pattern: "\\p{Extended_Pictographic}",
        replacement: "E",
      }),
    ).toMatchObject({ replacements: 6 });
  });

  it("truncates by user-perceived characters without splitting emoji or combining marks", async () => {
    const text = `ab${FAMILY}${E_ACUTE}${FLAG}cd`;
    expect(await ok("text", { operation: "truncate", text, max_length: 5 })).toEqual({
      text: `ab${FAMILY}${E_ACUTE}…`,
      truncated: true,
      original_length: 7,
      length: 5,
    });
    expect((await ok("text", { operation: "truncate", text, max_length: 3, ellipsis: "" })).text).toBe(`ab${FAMILY}`);
    expect((await ok("text", { operation: "truncate", text, max_length: 6, ellipsis: "..." })).text).toBe(
      `ab${FAMILY}...`,
    );
    expect((await ok("text", { operation: "truncate", text, max_length: 2, ellipsis: "..." })).text).toBe("ab");
    expect(await ok("text", { operation: "truncate", text, max_length: 7 })).toEqual({
      text,
      truncated: false,
      original_length: 7,
      length: 7,
    });
    expect((await ok("text", { operation: "truncate", text, max_length: 0 })).text).toBe("");
    // Every prefix is valid Unicode: no lone surrogate anywhere.
    for (let n = 0; n <= 7; n++) {
      const cut = (await ok("text", { operation: "truncate", text, max_length: n, ellipsis: "" })).text as string;
      expect(cut.isWellFormed()).toBe(true);
      expect(text.startsWith(cut)).toBe(true);
    }
  });
});
