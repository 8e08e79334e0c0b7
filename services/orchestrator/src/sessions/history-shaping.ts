import { estimateTokens, type ChatMessage } from "@tog/providers";
import type { WindowSettings } from "./presets.ts";

// From a session's earlier messages to what the agent gets, deterministically (same input, same
// output: a resumed run sees what the first attempt saw, and nothing calls a model):
//
// 1. Window: at most `historyWindowSize` messages. A longer session keeps its first
//    `primersCount` messages (how the conversation began) and its latest messages.
// 2. Compression: when the window's token estimate (estimateTokens: 4 characters per token,
//    message contents only) is above `compressionTriggerRatio` × the model's context window,
//    the first `primersCount` and the last `recentsCount` messages stay verbatim and the
//    messages between them become one summary message (a user message, so client text never
//    gains system authority) listing each of them as `- <role>: <excerpt>`, the excerpts cut
//    evenly so the history fits `compressionTargetRatio` × the context window. If primers and
//    recents alone do not fit, their longest contents are cut too (never a code point in half).

export interface ShapedHistory {
  messages: ChatMessage[];
  /** Messages of earlier turns before shaping. */
  available: number;
  /** Dropped by the window. */
  omitted: number;
  /** Present when the history was compressed. */
  compression?: { summarized: number; tokensBefore: number; tokensAfter: number; targetTokens: number } | undefined;
}

export const SUMMARY_HEADER = "Summary of earlier messages of this conversation";
const CLIP_MARK = "…";
/** Excerpts shorter than this say nothing; below it the summary only counts the messages. */
const MIN_EXCERPT_TOKENS = 8;

export function tokensOf(messages: readonly ChatMessage[]): number {
  let n = 0;
  for (const m of messages) n += estimateTokens(m.content);
  return n;
}

/** `messages` in conversation order; `total`: how many the session really has (the list may hold only its head and tail). */
export function applyWindow(
  messages: readonly ChatMessage[],
  settings: Pick<WindowSettings, "historyWindowSize" | "primersCount">,
  total = messages.length,
): { messages: ChatMessage[]; omitted: number } {
  const w = settings.historyWindowSize;
  if (total <= w && messages.length <= w) return { messages: [...messages], omitted: 0 };
  const head = Math.min(settings.primersCount, w);
  const tail = w - head;
  return {
    messages: [...messages.slice(0, head), ...(tail > 0 ? messages.slice(-tail) : [])],
    omitted: total - w,
  };
}

export function shapeHistory(
  messages: readonly ChatMessage[],
  settings: WindowSettings,
  contextWindow: number,
  total = messages.length,
): ShapedHistory {
  const windowed = applyWindow(messages, settings, total);
  const shaped: ShapedHistory = { messages: windowed.messages, available: total, omitted: windowed.omitted };
  const before = tokensOf(windowed.messages);
  if (before <= settings.compressionTriggerRatio * contextWindow) return shaped;
  // Compressing "down to" a share above the trigger would leave the history over the trigger.
  const targetTokens = Math.floor(
    Math.min(settings.compressionTargetRatio, settings.compressionTriggerRatio) * contextWindow,
  );
  const { messages: compressed, summarized } = compress(windowed.messages, settings, targetTokens);
  shaped.messages = compressed;
  shaped.compression = { summarized, tokensBefore: before, tokensAfter: tokensOf(compressed), targetTokens };
  return shaped;
}

function compress(
  window: readonly ChatMessage[],
  settings: WindowSettings,
  targetTokens: number,
): { messages: ChatMessage[]; summarized: number } {
  const n = window.length;
  const head = Math.min(settings.primersCount, n);
  const tailStart = Math.max(head, n - settings.recentsCount);
  const primers = window.slice(0, head);
  const middle = window.slice(head, tailStart);
  const recents = window.slice(tailStart);
  const kept = [...primers, ...recents];

  let summary: ChatMessage | undefined;
  if (middle.length > 0) {
    const header = `${SUMMARY_HEADER} (${middle.length} message${middle.length === 1 ? "" : "s"}, compressed to fit the model's context window):`;
    const lineCost = (m: ChatMessage) => estimateTokens(`\n- ${m.role}: `) + 1;
    const room = targetTokens - tokensOf(kept) - estimateTokens(header) - middle.reduce((s, m) => s + lineCost(m), 0);
    const cap = waterLevel(
      middle.map((m) => estimateTokens(m.content)),
      room,
    );
    const content =
      cap >= MIN_EXCERPT_TOKENS
        ? `${header}${middle.map((m) => `\n- ${m.role}: ${clipTokens(oneLine(m.content), cap)}`).join("")}`
        : `${header} omitted.`;
    summary = { role: "user", content };
  }

  const summaryTokens = summary ? estimateTokens(summary.content) : 0;
  let fitted = kept;
  if (tokensOf(kept) + summaryTokens > targetTokens) {
    const cap = waterLevel(
      kept.map((m) => estimateTokens(m.content)),
      Math.max(0, targetTokens - summaryTokens),
    );
    fitted = kept.map((m) => (estimateTokens(m.content) > cap ? { ...m, content: clipTokens(m.content, cap) } : m));
  }
  const out = [...fitted.slice(0, primers.length), ...(summary ? [summary] : []), ...fitted.slice(primers.length)];
  return { messages: out, summarized: middle.length };
}

/**
 * The largest per-item cap (in tokens) such that the items, each cut to the cap, sum to at most
 * `budget`. Short items stay whole; the long ones share what is left evenly.
 */
export function waterLevel(sizes: readonly number[], budget: number): number {
  if (budget <= 0 || sizes.length === 0) return 0;
  const sorted = [...sizes].sort((a, b) => a - b);
  let remaining = budget;
  for (let i = 0; i < sorted.length; i++) {
    const left = sorted.length - i;
    const even = Math.floor(remaining / left);
    if (sorted[i]! > even) return even;
    remaining -= sorted[i]!;
  }
  return sorted.at(-1)!;
}

/** The text cut to about `tokens` tokens (marker included), on a code point boundary. */
export function clipTokens(text: string, tokens: number): string {
  if (estimateTokens(text) <= tokens) return text;
  // The marker takes one token's worth; estimateTokens rounds up, so stay a character short.
  let end = Math.max(0, tokens * 4 - 4);
  const code = text.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end -= 1;
  return `${text.slice(0, end)}${CLIP_MARK}`;
}

function oneLine(text: string): string {
  return text.replace(/\s+/g, " ").trim();
}
