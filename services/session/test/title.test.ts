import { describe, expect, it } from "vitest";
import { ValidationError } from "@tog/core";
import { cleanTitle, codePointLength, TITLE_MAX_CHARS, validTitle } from "../src/sessions/title.ts";

describe("session title cleaning", () => {
  it("trims, turns line breaks and tabs into spaces, removes other control characters", () => {
    expect(cleanTitle("  Trip\tplanning\r\nnotes \u0000\u0007\u007f\u009b ")).toBe("Trip planning  notes");
  });

  it("removes zero-width, soft-hyphen, BOM and bidirectional control characters", () => {
    expect(cleanTitle("\uFEFFin\u200Bvisi\u200Cble\u2060 \u00ADtitle\u200E\u202Egnp.exe\u202C")).toBe(
      "invisible titlegnp.exe",
    );
  });

  it("keeps a zero-width joiner only inside an emoji sequence", () => {
    expect(cleanTitle("👩\u200D💻 team")).toBe("👩\u200D💻 team");
    expect(cleanTitle("👩🏽\u200D💻")).toBe("👩🏽\u200D💻");
    expect(cleanTitle("👨\u200D👩\u200D👧 family")).toBe("👨\u200D👩\u200D👧 family");
    expect(cleanTitle("a\u200Db \u200D👩 👩\u200D")).toBe("ab 👩 👩");
  });

  it("normalizes to NFC, so a decomposed accent is one character", () => {
    expect(cleanTitle("Cafe\u0301")).toBe("Café");
    expect(codePointLength(cleanTitle("e\u0301".repeat(60)))).toBe(60);
  });

  it("counts code points at the 60-character edge: multi-byte and emoji accepted at 60, refused at 61", () => {
    for (const unit of ["a", "é", "日", "😀", "𝄞"]) {
      expect(validTitle(unit.repeat(TITLE_MAX_CHARS))).toBe(unit.repeat(TITLE_MAX_CHARS));
      expect(() => validTitle(unit.repeat(TITLE_MAX_CHARS + 1))).toThrow(
        `title must be at most 60 characters (got 61)`,
      );
    }
    // Surrounding whitespace and removed characters do not count.
    expect(validTitle(`  ${"😀".repeat(60)}\u200B\n`)).toBe("😀".repeat(60));
  });

  it("refuses a title that is empty after cleaning", () => {
    for (const raw of ["", "   ", "\u200B\u200B", "\n\t", "\u0000"]) {
      expect(() => validTitle(raw)).toThrow(ValidationError);
      expect(() => validTitle(raw)).toThrow("title must not be empty");
    }
  });
});
