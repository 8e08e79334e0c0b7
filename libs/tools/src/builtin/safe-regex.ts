import vm from "node:vm";
import { ValidationError } from "@tog/core";

// JavaScript regular expressions backtrack, so a pattern like (a+)+$ can run for minutes on a
// short input (ReDoS). Node has no RE2 without a native addon, but V8 honours vm's `timeout`
// inside regex execution, so patterns run in a separate context with a hard deadline. The
// context is created once; a call costs well under a millisecond.

export const MAX_PATTERN_LENGTH = 1_000;
export const DEFAULT_REGEX_TIMEOUT_MS = 250;

interface RegexContext {
  __request: string;
}

const context = vm.createContext({ __request: "" } satisfies RegexContext);
// Inputs and outputs cross the realm boundary as JSON strings, so no object of the other realm
// leaks out and nothing in the sandbox can reach this realm's globals.
vm.runInContext(
  `
  globalThis.__run = function (request) {
    const { op, pattern, flags, text, replacement, limit } = JSON.parse(request);
    const re = new RegExp(pattern, flags);
    if (op === "extract") {
      const matches = [];
      for (const m of text.matchAll(re)) {
        matches.push({ match: m[0], index: m.index, groups: m.slice(1).map((g) => g ?? null), named: m.groups ? { ...m.groups } : null });
        if (matches.length >= limit) break;
      }
      return JSON.stringify({ matches });
    }
    // Native replace keeps $1, $<name>, $& and $$ exactly; the count is a second pass.
    const out = text.replace(re, replacement);
    let count = 0;
    if (re.global) for (const _ of text.matchAll(re)) count++;
    else count = re.test(text) ? 1 : 0;
    return JSON.stringify({ text: out, count });
  };
  `,
  context,
);
const script = new vm.Script("__run(__request)");

export interface RegexMatch {
  match: string;
  /** UTF-16 offset into the input. */
  index: number;
  groups: (string | null)[];
  named: Record<string, string | null> | null;
}

type Request =
  | { op: "extract"; pattern: string; flags: string; text: string; limit: number }
  | { op: "replace"; pattern: string; flags: string; text: string; replacement: string };

function runRegex(request: Request, timeoutMs: number): unknown {
  if (request.pattern.length > MAX_PATTERN_LENGTH) {
    throw new ValidationError(`pattern is too long (at most ${MAX_PATTERN_LENGTH} characters)`);
  }
  (context as RegexContext).__request = JSON.stringify(request);
  try {
    return JSON.parse(script.runInContext(context, { timeout: timeoutMs }) as string);
  } catch (cause) {
    const error = cause as { code?: string; name?: string; message?: string };
    if (error.code === "ERR_SCRIPT_EXECUTION_TIMEOUT") {
      throw new ValidationError(
        `The regular expression took longer than ${timeoutMs} ms and was stopped (catastrophic backtracking?); simplify the pattern`,
        { cause },
      );
    }
    // Errors of the other realm are not instances of this realm's SyntaxError.
    if (error.name === "SyntaxError") throw new ValidationError(`pattern: ${error.message}`, { cause });
    throw cause;
  } finally {
    (context as RegexContext).__request = "";
  }
}

export function extractMatches(
  pattern: string,
  flags: string,
  text: string,
  limit: number,
  timeoutMs = DEFAULT_REGEX_TIMEOUT_MS,
): RegexMatch[] {
  const result = runRegex({ op: "extract", pattern, flags: withGlobal(flags), text, limit }, timeoutMs) as {
    matches: RegexMatch[];
  };
  return result.matches;
}

export function replaceMatches(
  pattern: string,
  flags: string,
  text: string,
  replacement: string,
  all: boolean,
  timeoutMs = DEFAULT_REGEX_TIMEOUT_MS,
): { text: string; count: number } {
  const effective = all ? withGlobal(flags) : flags.replaceAll("g", "");
  return runRegex({ op: "replace", pattern, flags: effective, text, replacement }, timeoutMs) as {
    text: string;
    count: number;
  };
}

function withGlobal(flags: string): string {
  return flags.includes("g") ? flags : `${flags}g`;
}
