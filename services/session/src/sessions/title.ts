import { ValidationError } from "@tog/core";
import { TITLE_MAX_CHARS } from "@tog/api";

// PATCH /sessions/{id} `title` (OpenAPI `renameSession`): cleaned, then at most 60 characters.
//
// Cleaning, in order: Unicode NFC (a decomposed "é" is one character, as the user sees it);
// line breaks and tabs become spaces; other control characters (Cc), invisible formatting
// characters (zero-width space and non-joiner, word joiner, BOM, soft hyphen, Mongolian vowel
// separator) and bidirectional controls (which can make text display in an order other than it
// is stored) are removed; a zero-width joiner is kept only inside an emoji sequence (👩‍💻), where
// it is part of the visible character; surrounding whitespace is trimmed.
//
// Length is counted in Unicode code points, not UTF-16 units or bytes: 60 emoji are 60
// characters. A longer title is refused (400), never cut, so no character is ever split.

export { TITLE_MAX_CHARS };

const LINE_BREAKS = /[\t\n\v\f\r\u0085\u2028\u2029]/g;
const INVISIBLE = /[\p{Cc}\u00AD\u180E\u200B\u200C\u2060-\u2064\uFEFF\u200E\u200F\u202A-\u202E\u2066-\u2069]/gu;
const ZWJ = "\u200D";
// biome-ignore lint/suspicious/noMisleadingCharacterClass: VS16 alone is one of the alternatives, not a sequence
const EMOJI_BEFORE = /[\p{Extended_Pictographic}\p{Emoji_Modifier}\uFE0F]$/u;
const EMOJI_AFTER = /^\p{Extended_Pictographic}/u;

export function cleanTitle(raw: string): string {
  const text = raw.normalize("NFC").replace(LINE_BREAKS, " ").replace(INVISIBLE, "");
  let out = "";
  let i = 0;
  for (const part of text.split(ZWJ)) {
    if (i++ > 0 && EMOJI_BEFORE.test(out) && EMOJI_AFTER.test(part)) out += ZWJ;
    out += part;
  }
  return out.trim();
}

export function codePointLength(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** The cleaned title, or ValidationError with the documented 400 text. */
export function validTitle(raw: string): string {
  const title = cleanTitle(raw);
  if (title === "")
    throw new ValidationError("title must not be empty (after removing control characters and surrounding whitespace)");
  const length = codePointLength(title);
  if (length > TITLE_MAX_CHARS)
    throw new ValidationError(`title must be at most ${TITLE_MAX_CHARS} characters (got ${length})`);
  return title;
}
