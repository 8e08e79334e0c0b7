// What the offline provider reads out of a query. Pure functions of the text, so the same
// query always gets the same tool call, plan and score.

export type ToolIntent =
  | { tool: "calculator"; expression: string }
  | { tool: "datetime"; operation: "now"; timezone?: string }
  | { tool: "datetime"; operation: "days_between"; start: string; end: string }
  | { tool: "json"; operation: "format" | "parse" | "minify"; text: string }
  | { tool: "workspace_write"; key: string; value: string; action: "set" };

const ISO_DATE = String.raw`\d{4}-\d{2}-\d{2}(?:[T ]\d{2}:\d{2}(?::\d{2})?(?:Z|[+-]\d{2}:?\d{2})?)?`;
const DAYS_BETWEEN = new RegExp(
  String.raw`\b(?:days?|weeks?|time)\s+(?:are\s+(?:there\s+)?)?(?:between|from)\s+(${ISO_DATE})\s+(?:and|to|until)\s+(${ISO_DATE})`,
  "i",
);
const NOW_QUESTION =
  /\b(?:what(?:'s|\s+is)\s+(?:the\s+)?(?:current\s+|today'?s\s+)?(?:time|date|day)\b|current\s+(?:time|date)\b|today'?s\s+date\b|what\s+day\s+is\s+(?:it|today)\b|what\s+time\s+is\s+it\b)/i;
const TIMEZONE = /\b(UTC|GMT|[A-Z][a-z]+\/[A-Z][A-Za-z_]+(?:\/[A-Z][A-Za-z_]+)?)\b/;
const JSON_WORDS = /\b(json|parse|pretty[- ]?print|format|minify|validate)\b/i;
// `Save "<value>" to workspace key <key>`: a tool with a side effect without a real provider
// (the chaos suite counts each such write, docs/reliability.md). Key characters as workspace_write
// accepts them; a sentence's final dot is not part of the key.
const WORKSPACE_SAVE =
  /\b(?:save|store|write)\s+"([^"]*)"\s+(?:to|in|into|under)\s+(?:the\s+)?workspace\s+key\s+([A-Za-z0-9][A-Za-z0-9_.:/-]*)/i;
const ARITHMETIC_RUN = /[\d.()+\-*/^%×÷\s]+/g;
const HAS_OPERATION = /\d\s*[-+*/^%×÷]\s*[\d(]|\)\s*[-+*/^%×÷]/;

/** The tool a query asks for, among `offered` tool names; date questions win over arithmetic (2024-01-05 is not a subtraction). */
export function detectToolIntent(query: string, offered: ReadonlySet<string>): ToolIntent | undefined {
  if (offered.has("workspace_write")) {
    const save = WORKSPACE_SAVE.exec(query);
    const key = save?.[2]?.replace(/[.:/-]+$/, "");
    if (save && key) return { tool: "workspace_write", key, value: save[1] ?? "", action: "set" };
  }
  if (offered.has("datetime")) {
    const between = DAYS_BETWEEN.exec(query);
    if (between?.[1] && between[2])
      return { tool: "datetime", operation: "days_between", start: between[1], end: between[2] };
    if (NOW_QUESTION.test(query)) {
      const tz = TIMEZONE.exec(query)?.[1];
      return tz ? { tool: "datetime", operation: "now", timezone: tz } : { tool: "datetime", operation: "now" };
    }
  }
  if (offered.has("json") && JSON_WORDS.test(query)) {
    const text = findJson(query);
    if (text !== undefined) {
      const word = JSON_WORDS.exec(query.replace(/\bjson\b/gi, ""))?.[1]?.toLowerCase() ?? "format";
      const operation = word === "minify" ? "minify" : word === "parse" || word === "validate" ? "parse" : "format";
      return { tool: "json", operation, text };
    }
  }
  if (offered.has("calculator")) {
    const expression = findArithmetic(query);
    if (expression !== undefined) return { tool: "calculator", expression };
  }
  return undefined;
}

/** The longest arithmetic expression in the text ("what is 12*(3+4)?" → "12*(3+4)"). */
export function findArithmetic(text: string): string | undefined {
  if (new RegExp(ISO_DATE).test(text)) text = text.replace(new RegExp(ISO_DATE, "g"), " ");
  let best: string | undefined;
  for (const match of text.matchAll(ARITHMETIC_RUN)) {
    const candidate = balance(match[0].trim().replace(/^[-+*/^%×÷.\s]+(?=\()|[-+*/^%×÷.\s]+$/g, ""));
    if (!HAS_OPERATION.test(candidate)) continue;
    if (best === undefined || candidate.length > best.length) best = candidate;
  }
  return best?.replace(/×/g, "*").replace(/÷/g, "/");
}

/** Drops unmatched parentheses at either end ("(3+4" stays unbalanced only if interior). */
function balance(expr: string): string {
  let s = expr;
  for (;;) {
    let depth = 0;
    let min = 0;
    for (const ch of s) {
      if (ch === "(") depth++;
      else if (ch === ")") min = Math.min(min, --depth);
    }
    if (min < 0 && s.startsWith(")")) s = s.slice(1).trim();
    else if (depth > 0 && s.startsWith("(") && !s.endsWith(")")) s = s.slice(1).trim();
    else if (min < 0 && s.endsWith(")")) s = s.slice(0, -1).trim();
    else return s;
  }
}

/** The first JSON object or array embedded in the text, as written. */
export function findJson(text: string): string | undefined {
  // Bounded attempts: a long text full of braces must not cost a cubic number of parses.
  let starts = 0;
  for (let start = 0; start < text.length && starts < 8; start++) {
    const open = text[start];
    if (open !== "{" && open !== "[") continue;
    starts++;
    const close = open === "{" ? "}" : "]";
    let ends = 0;
    for (let end = text.lastIndexOf(close); end > start && ends++ < 16; end = text.lastIndexOf(close, end - 1)) {
      const candidate = text.slice(start, end + 1);
      try {
        JSON.parse(candidate);
        return candidate;
      } catch {
        // try a shorter span
      }
    }
  }
  return undefined;
}

export interface PlannedSubtask {
  id: string;
  description: string;
  dependencies: string[];
}

const SEQUENTIAL = /^(?:,?\s*(?:and\s+)?then|,?\s*after\s+that,?|,?\s*finally,?|,?\s*afterwards,?)$/i;
const SEQUENTIAL_START = /^(?:and\s+)?(?:then|after\s+that|finally|afterwards)\b/i;
const SPLIT =
  /(;|(?<=[.?!])\s+(?=[A-Z0-9])|,?\s+(?:and\s+)?then\s+|,?\s+after\s+that,?\s+|,?\s+finally,?\s+|,?\s+afterwards,?\s+)/i;
const LIST_ITEM = /^\s*(?:(\d+)[.)]|[-*•])\s+(.+)$/;
const MAX_SUBTASKS = 6;

/**
 * Deterministic decomposition: list items (numbered → sequential, bullets → parallel), else
 * sentences / `;` (parallel) and "then" / "after that" / "finally" (each depends on the one
 * before), else " and " between clauses of 3+ words (parallel), else research → answer.
 */
export function decompose(query: string): PlannedSubtask[] {
  const { parts, sequential } = splitQuery(query);
  const q = query
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\s,;.]+$/, "");
  const steps =
    parts.length > 1
      ? parts.map((description, i) => ({ description, after: sequential[i] === true }))
      : [
          { description: `Research: ${q}`, after: false },
          { description: `Write the answer to: ${q}`, after: true },
        ];
  return steps.map((s, i) => ({
    id: `task-${i + 1}`,
    description: s.description,
    dependencies: s.after && i > 0 ? [`task-${i}`] : [],
  }));
}

/** Parts of a query and, per part, whether it must wait for the part before it. */
export function splitQuery(query: string): { parts: string[]; sequential: boolean[] } {
  const lines = query.split(/\n+/).filter((l) => l.trim() !== "");
  const items = lines.map((l) => LIST_ITEM.exec(l)).filter((m) => m !== null);
  if (items.length >= 2) {
    const numbered = items.every((m) => m[1] !== undefined);
    return cap(
      items.map((m) => clean(m[2] ?? "")),
      items.map((_, i) => numbered && i > 0),
    );
  }
  const pieces = query.replace(/\s+/g, " ").trim().split(SPLIT);
  const parts: string[] = [];
  const sequential: boolean[] = [];
  let nextSequential = false;
  for (let i = 0; i < pieces.length; i++) {
    const piece = pieces[i] ?? "";
    if (i % 2 === 1) {
      nextSequential = SEQUENTIAL.test(piece.trim());
      continue;
    }
    const text = clean(piece);
    if (text === "") continue;
    parts.push(text);
    // "… BYD. Then write a report": the sentence split took the boundary, the word is in the piece.
    sequential.push(parts.length > 1 && (nextSequential || SEQUENTIAL_START.test(piece.trim())));
    nextSequential = false;
  }
  if (parts.length === 1) {
    const clauses = (parts[0] ?? "").split(/\s+and\s+/i).map(clean);
    if (clauses.length > 1 && clauses.every((c) => c.split(" ").length >= 3)) {
      return cap(
        clauses,
        clauses.map(() => false),
      );
    }
  }
  return cap(parts, sequential);
}

function cap(parts: string[], sequential: boolean[]): { parts: string[]; sequential: boolean[] } {
  if (parts.length <= MAX_SUBTASKS) return { parts, sequential };
  const head = parts.slice(0, MAX_SUBTASKS - 1);
  head.push(parts.slice(MAX_SUBTASKS - 1).join("; "));
  return { parts: head, sequential: sequential.slice(0, MAX_SUBTASKS) };
}

function clean(text: string): string {
  const t = text
    .replace(/\s+/g, " ")
    .trim()
    .replace(/^(?:and|then|also|finally)\s+/i, "")
    .replace(/[\s,;.]+$/, "");
  return t.charAt(0).toUpperCase() + t.slice(1);
}

export interface ComplexityEstimate {
  complexity_score: number;
  mode: "simple" | "standard" | "complex";
  reasoning: string;
}

const DEPTH_WORDS =
  /\b(compare|comparison|analy[sz]e|analysis|research|investigate|design|plan|evaluate|report|strateg\w*|comprehensive|in-depth|step[- ]by[- ]step|pros and cons|trade-?offs?)\b/gi;

/**
 * Deterministic complexity score in [0, 1]: 0.1 base, + up to 0.2 for length (60+ words),
 * + 0.2 per extra part (see splitQuery, at most 0.4), + 0.1 per distinct depth word
 * (compare, analyze, research, ..., at most 0.3); at least 0.35 when a built-in tool is
 * needed. Mode: < 0.3 simple, < 0.6 standard, else complex.
 */
export function estimateComplexity(query: string): ComplexityEstimate {
  const words = query.trim() === "" ? 0 : query.trim().split(/\s+/).length;
  const parts = splitQuery(query).parts.length;
  const depth = new Set([...query.matchAll(DEPTH_WORDS)].map((m) => (m[1] ?? "").toLowerCase()));
  const needsTool =
    detectToolIntent(query, new Set(["calculator", "datetime", "json", "workspace_write"])) !== undefined;
  let score =
    0.1 +
    Math.min(0.2, (words / 60) * 0.2) +
    Math.min(0.4, 0.2 * Math.max(0, parts - 1)) +
    Math.min(0.3, 0.1 * depth.size);
  if (needsTool) score = Math.max(score, 0.35);
  score = Math.round(Math.min(1, score) * 100) / 100;
  const mode = score < 0.3 ? "simple" : score < 0.6 ? "standard" : "complex";
  const plural = (n: number, word: string) => `${n} ${word}${n === 1 ? "" : "s"}`;
  const reasons = [plural(words, "word"), plural(parts, "part")];
  if (depth.size > 0) reasons.push(`depth words: ${[...depth].sort().join(", ")}`);
  if (needsTool) reasons.push("needs a built-in tool");
  return { complexity_score: score, mode, reasoning: `Offline estimate from ${reasons.join("; ")}.` };
}
