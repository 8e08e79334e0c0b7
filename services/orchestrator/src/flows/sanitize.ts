import type { ChatMessage } from "@tog/providers";

// LLM_PROMPT `sanitized_prompt`: the messages as readable text, credentials masked and the
// length bounded, because events are stored and streamed to every reader of the task.

const MAX_SANITIZED = 4_000;

const SECRETS: ReadonlyArray<readonly [RegExp, string]> = [
  [/\bsk_[a-f0-9]{64}\b/g, "sk_[REDACTED]"],
  [/\bsk-[A-Za-z0-9_-]{16,}/g, "sk-[REDACTED]"],
  [/\b(Bearer)\s+[A-Za-z0-9._~+/=-]{8,}/gi, "$1 [REDACTED]"],
  [/\b(api[_-]?key|password|passwd|secret|token|access[_-]?key)(["']?\s*[:=]\s*["']?)[^\s"',;}]+/gi, "$1$2[REDACTED]"],
  [/\beyJ[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}\.[A-Za-z0-9_-]{8,}/g, "[REDACTED_JWT]"],
];

export function sanitizePrompt(messages: readonly ChatMessage[]): string {
  let text = messages
    .map((m) => `[${m.role}] ${m.content}${m.tool_calls?.length ? ` ${JSON.stringify(m.tool_calls)}` : ""}`)
    .join("\n");
  for (const [pattern, replacement] of SECRETS) text = text.replace(pattern, replacement);
  return text.length <= MAX_SANITIZED ? text : `${text.slice(0, MAX_SANITIZED - 1)}…`;
}

/** Characters of all message contents (LLM_PROMPT `prompt_length`). */
export function promptLength(messages: readonly ChatMessage[]): number {
  return messages.reduce((n, m) => n + m.content.length, 0);
}
