import { z } from "zod";
import { ValidationError } from "@tog/core";
import { defineTool, type ToolResult } from "../tool.ts";
import { codePointLength } from "./json-value.ts";
import { DEFAULT_REGEX_TIMEOUT_MS, MAX_PATTERN_LENGTH, extractMatches, replaceMatches } from "./safe-regex.ts";

// "Characters" means Unicode code points for counting and user-perceived characters (grapheme
// clusters, via Intl.Segmenter) for truncation, so an emoji, a flag or e + combining accent is
// never cut in half.

const MAX_TEXT = 1_000_000;
const CASES = ["upper", "lower", "title", "sentence", "camel", "pascal", "snake", "kebab", "constant"] as const;

const parameters = z
  .object({
    operation: z
      .enum(["count", "case", "extract", "replace", "truncate"])
      .describe(
        "count: characters, words, lines; case: change letter case; extract: regex matches; replace: regex or literal replace; truncate: shorten without splitting characters",
      ),
    text: z.string().max(MAX_TEXT).describe("The input text"),
    to: z.enum(CASES).optional().describe("case: target case"),
    locale: z
      .string()
      .max(35)
      .optional()
      .describe('case: BCP 47 locale for language-specific rules (e.g. "tr" for dotted I); default locale-independent'),
    pattern: z
      .string()
      .min(1)
      .max(MAX_PATTERN_LENGTH)
      .optional()
      .describe(
        "extract, replace: JavaScript regular expression source without slashes (plain text when literal is true)",
      ),
    flags: z
      .string()
      .regex(/^(?!.*(.).*\1)[gimsuv]*$/, "Only the flags g, i, m, s, u, v, each at most once")
      .default("u")
      .describe("extract, replace: regex flags (default u); g is implied for extract"),
    replacement: z
      .string()
      .max(10_000)
      .optional()
      .describe("replace: replacement; $1, $<name> and $& refer to the match unless literal"),
    literal: z.boolean().default(false).describe("replace: treat pattern as plain text (default false)"),
    all: z.boolean().default(true).describe("replace: replace every match, not only the first (default true)"),
    max_matches: z
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(100)
      .describe("extract: at most this many matches (default 100)"),
    max_length: z
      .number()
      .int()
      .min(0)
      .max(MAX_TEXT)
      .optional()
      .describe("truncate: maximum length in user-perceived characters, ellipsis included"),
    ellipsis: z.string().max(10).default("…").describe("truncate: appended when the text is cut (default …)"),
  })
  .strict()
  .superRefine((args, ctx) => {
    const need = (field: "to" | "pattern" | "replacement" | "max_length") => {
      if (args[field] === undefined)
        ctx.addIssue({ code: "custom", path: [field], message: `Required for operation "${args.operation}"` });
    };
    if (args.operation === "case") need("to");
    if (args.operation === "extract") need("pattern");
    if (args.operation === "replace") need("pattern"), need("replacement");
    if (args.operation === "truncate") need("max_length");
    if (args.flags.includes("u") && args.flags.includes("v")) {
      ctx.addIssue({ code: "custom", path: ["flags"], message: "The flags u and v cannot be combined" });
    }
  });

type Args = z.output<typeof parameters>;

const segmenters = new Map<string, Intl.Segmenter>();
function segmenter(granularity: "grapheme" | "word" | "sentence", locale?: string): Intl.Segmenter {
  const key = `${granularity}:${locale ?? ""}`;
  let found = segmenters.get(key);
  if (!found) {
    found = new Intl.Segmenter(locale, { granularity });
    segmenters.set(key, found);
  }
  return found;
}

function graphemes(text: string): string[] {
  return Array.from(segmenter("grapheme").segment(text), (s) => s.segment);
}

function checkLocale(locale: string | undefined): string | undefined {
  if (locale === undefined) return undefined;
  try {
    return Intl.getCanonicalLocales(locale)[0];
  } catch {
    throw new ValidationError(`locale: "${locale}" is not a BCP 47 language tag`);
  }
}

export interface TextCounts {
  /** Unicode code points. */
  characters: number;
  /** User-perceived characters (grapheme clusters). */
  graphemes: number;
  words: number;
  /** A final line break does not start another line; empty text has 0 lines. */
  lines: number;
  bytes_utf8: number;
}

export function countText(text: string): TextCounts {
  let words = 0;
  for (const s of segmenter("word").segment(text)) if (s.isWordLike) words++;
  const breaks = text.match(/\r\n|\r|\n/g)?.length ?? 0;
  const endsWithBreak = /(?:\r\n|\r|\n)$/.test(text);
  return {
    characters: codePointLength(text),
    graphemes: graphemes(text).length,
    words,
    lines: text === "" ? 0 : breaks + (endsWithBreak ? 0 : 1),
    bytes_utf8: Buffer.byteLength(text, "utf8"),
  };
}

/** Words for identifier-style cases: word segments, further split at camelCase and underscores. */
function identifierWords(text: string): string[] {
  const words: string[] = [];
  for (const s of segmenter("word").segment(text)) {
    if (!s.isWordLike) continue;
    for (const part of s.segment.split(/_+|(?<=[\p{Ll}\p{N}])(?=\p{Lu})|(?<=\p{Lu})(?=\p{Lu}\p{Ll})/u)) {
      if (part !== "") words.push(part);
    }
  }
  return words;
}

function capitalize(word: string, locale: string | undefined): string {
  const [first = "", ...rest] = graphemes(word);
  return first.toLocaleUpperCase(locale) + rest.join("").toLocaleLowerCase(locale);
}

export function changeCase(text: string, to: (typeof CASES)[number], localeTag?: string): string {
  const locale = checkLocale(localeTag);
  switch (to) {
    case "upper":
      return text.toLocaleUpperCase(locale);
    case "lower":
      return text.toLocaleLowerCase(locale);
    case "title":
      return Array.from(segmenter("word", locale).segment(text), (s) =>
        s.isWordLike ? capitalize(s.segment, locale) : s.segment,
      ).join("");
    case "sentence":
      return Array.from(segmenter("sentence", locale).segment(text), (s) => {
        const lower = s.segment.toLocaleLowerCase(locale);
        // The sentence's first letter or digit; a sentence starting with "3 apples" stays lower case.
        const firstLetter = lower.search(/[\p{L}\p{N}]/u);
        if (firstLetter < 0 || !/\p{L}/u.test(lower.charAt(firstLetter))) return lower;
        const letter = String.fromCodePoint(lower.codePointAt(firstLetter) ?? 0);
        return (
          lower.slice(0, firstLetter) + letter.toLocaleUpperCase(locale) + lower.slice(firstLetter + letter.length)
        );
      }).join("");
    case "camel":
    case "pascal": {
      const words = identifierWords(text).map((w) => capitalize(w, locale));
      if (to === "camel" && words[0] !== undefined) words[0] = words[0].toLocaleLowerCase(locale);
      return words.join("");
    }
    case "snake":
      return identifierWords(text)
        .map((w) => w.toLocaleLowerCase(locale))
        .join("_");
    case "kebab":
      return identifierWords(text)
        .map((w) => w.toLocaleLowerCase(locale))
        .join("-");
    case "constant":
      return identifierWords(text)
        .map((w) => w.toLocaleUpperCase(locale))
        .join("_");
  }
}

export function truncateText(text: string, maxLength: number, ellipsis = "…") {
  const parts = graphemes(text);
  if (parts.length <= maxLength) return { text, truncated: false, original_length: parts.length, length: parts.length };
  const ellipsisLength = graphemes(ellipsis).length;
  const kept =
    ellipsisLength < maxLength
      ? parts.slice(0, maxLength - ellipsisLength).join("") + ellipsis
      : parts.slice(0, maxLength).join("");
  return { text: kept, truncated: true, original_length: parts.length, length: graphemes(kept).length };
}

function escapeRegex(text: string): string {
  // Only syntax characters: with the u or v flag any other escaped character is an error.
  return text.replace(/[\\^$.*+?()[\]{}|/]/g, "\\$&");
}

function run(args: Args, regexTimeoutMs: number): ToolResult {
  switch (args.operation) {
    case "count": {
      const counts = countText(args.text);
      return {
        data: { ...counts },
        text: `${counts.characters} characters, ${counts.words} words, ${counts.lines} lines`,
      };
    }
    case "case": {
      const result = changeCase(args.text, args.to ?? "lower", args.locale);
      return { data: { text: result }, text: result };
    }
    case "extract": {
      const matches = extractMatches(args.pattern ?? "", args.flags, args.text, args.max_matches, regexTimeoutMs);
      // Report offsets in code points, the unit `count` uses, not in UTF-16 units.
      let unitOffset = 0;
      let pointOffset = 0;
      const withPoints = matches.map((m) => {
        pointOffset += codePointLength(args.text.slice(unitOffset, m.index));
        unitOffset = m.index;
        return { ...m, index: pointOffset };
      });
      return {
        data: { count: withPoints.length, matches: withPoints },
        text: withPoints.length === 0 ? "No matches" : withPoints.map((m) => m.match).join("\n"),
      };
    }
    case "replace": {
      const pattern = args.literal ? escapeRegex(args.pattern ?? "") : (args.pattern ?? "");
      // A literal replacement must not expand $1 or $&.
      const replacement = args.literal ? (args.replacement ?? "").replaceAll("$", "$$$$") : (args.replacement ?? "");
      const result = replaceMatches(pattern, args.flags, args.text, replacement, args.all, regexTimeoutMs);
      return { data: { text: result.text, replacements: result.count }, text: result.text };
    }
    case "truncate": {
      const result = truncateText(args.text, args.max_length ?? 0, args.ellipsis);
      return { data: result, text: result.text };
    }
  }
}

export interface TextToolOptions {
  /** Deadline for one regular expression run (extract, replace). */
  regexTimeoutMs?: number;
}

export function createTextTool(options: TextToolOptions = {}) {
  const regexTimeoutMs = options.regexTimeoutMs ?? DEFAULT_REGEX_TIMEOUT_MS;
  return defineTool({
    name: "text",
    description:
      "Text utilities: count (Unicode characters, words, lines), case (upper, lower, title, sentence, camel, pascal, snake, kebab, constant), " +
      "extract (regular expression matches), replace (regex or literal) and truncate (by user-perceived characters, never splitting an emoji).",
    parameters,
    riskLevel: "low",
    timeoutSeconds: 5,
    async execute(args) {
      return run(args, regexTimeoutMs);
    },
  });
}
