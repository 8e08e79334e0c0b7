import { ValidationError } from "@tog/core";
import type { EventPayloads } from "@tog/events";
import type { ModelEntry } from "@tog/catalog";
import {
  DEFAULT_RETRY_POLICY,
  LlmError,
  isAbortError,
  type ChatMessage,
  type RetryNotice,
  type StreamDelta,
  type ToolCall,
  type ToolSpec,
} from "@tog/providers";
import { TaskFailure, pending, type PendingEvent, type FlowContext } from "../runtime/flow-context.ts";
import { promptLength, sanitizePrompt } from "./sanitize.ts";
import type { ModelSelection } from "./task-plan.ts";
import { elapsedMs, type UsageTotals } from "./usage.ts";

// One model call as one durable step. Live: AGENT_THINKING, LLM_PROMPT, LLM_PARTIAL (coalesced),
// and per failed attempt that the router repeats or falls back from, a recoverable
// ERROR_OCCURRED. Committed with the checkpoint: ERROR_RECOVERY (when attempts failed before
// this result) and LLM_OUTPUT. A final failure is checkpointed too, so a replay fails the same
// way instead of calling the model again. The checkpoint is deferred (flow-context.ts): it goes
// with the next write, at the latest before the next step with effects starts.

/** Requests leave temperature unset (reasoning models refuse other values); both providers' default is 1. */
export const REPORTED_TEMPERATURE = 1;

/** A partial is flushed once this many characters are buffered... */
export const PARTIAL_MIN_CHARS = 32;
/**
 * ...and this long after the previous partial (the first goes at once): at most 20 a second, as
 * a reader can follow them, while a fast stream's burst of deltas becomes one event instead of
 * one per 32 characters — each event is a JetStream round trip and a row (docs/performance.md).
 */
export const PARTIAL_MIN_INTERVAL_MS = 50;
/** ...or when a delta arrives this long after the previous flush (slow streams stay live). */
export const PARTIAL_MAX_WAIT_MS = 250;

export interface ModelTurn {
  text: string;
  toolCalls: ToolCall[];
  usage: UsageTotals;
  model: string;
  provider: string;
  retryCount: number;
  durationMs: number;
}

type ModelStepOutput =
  | { ok: true; turn: ModelTurn }
  | { ok: false; errorType: "LLM_ERROR" | "INVALID_INPUT"; message: string; retryCount: number; maxRetries: number };

export interface ModelCall {
  key: string;
  messages: ChatMessage[];
  tools?: ToolSpec[] | undefined;
  /** Upper bound; lowered to the smallest max_output_tokens of the candidate models. */
  maxTokens: number;
  /** Default: the context's agent. */
  agentId?: string | undefined;
  thinking?: EventPayloads["AGENT_THINKING"] | undefined;
  /** Live events emitted when the call starts, before LLM_PROMPT. */
  preamble?: PendingEvent[] | undefined;
}

export async function callModel(ctx: FlowContext, selection: ModelSelection, call: ModelCall): Promise<ModelTurn> {
  const agentId = call.agentId ?? ctx.agentId;
  const chain = candidates(ctx, selection, (call.tools?.length ?? 0) > 0);
  const name = chain[0]?.id ?? "llm";
  const maxTokens = Math.max(1, Math.min(call.maxTokens, ...chain.map((m) => m.maxOutputTokens)));

  const out = await ctx.step<ModelStepOutput>(call.key, { kind: "llm", name, deferred: true }, async () => {
    for (const e of call.preamble ?? []) ctx.emit(e.type, e.message, e.data, e.agent_id ?? agentId);
    if (call.thinking) ctx.emit("AGENT_THINKING", call.thinking.thought, call.thinking, agentId);
    ctx.emit(
      "LLM_PROMPT",
      `Prompt to ${name}`,
      {
        model: name,
        prompt_length: promptLength(call.messages),
        max_tokens: maxTokens,
        temperature: REPORTED_TEMPERATURE,
        sanitized_prompt: sanitizePrompt(call.messages),
      },
      agentId,
    );
    const partials = partialEmitter((chunk, index, tokens) =>
      ctx.emit(
        "LLM_PARTIAL",
        "Streaming response",
        { chunk, chunk_index: index, total_tokens_so_far: tokens },
        agentId,
      ),
    );
    const maxRetries = ctx.settings.llmMaxRetries ?? DEFAULT_RETRY_POLICY.maxRetries;
    // Recoveries possible in one call: every attempt of every candidate but the first.
    const maxRecoveries = Math.max(1, chain.length * (maxRetries + 1) - 1);
    const notices: RetryNotice[] = [];
    const started = Date.now();
    try {
      const c = await ctx.llm.complete({
        ...selection,
        request: { messages: call.messages, tools: call.tools, max_tokens: maxTokens },
        signal: ctx.signal,
        onDelta: partials.push,
        onRetry(notice) {
          partials.flush();
          notices.push(notice);
          ctx.emit(
            "ERROR_OCCURRED",
            `LLM call to ${notice.model} failed; ${notice.action === "retry" ? "retrying" : `falling back to ${notice.nextModel}`}`,
            retryError(notice, maxRetries),
            agentId,
          );
        },
      });
      partials.flush();
      const turn: ModelTurn = {
        text: c.text,
        toolCalls: c.toolCalls,
        usage: {
          inputTokens: c.usage.inputTokens,
          outputTokens: c.usage.outputTokens,
          totalTokens: c.usage.totalTokens,
          costUsd: c.costUsd,
        },
        model: c.model,
        provider: c.provider,
        retryCount: c.retryCount,
        durationMs: elapsedMs(started),
      };
      const events: PendingEvent[] = [];
      if (notices.length > 0)
        events.push(
          recovery(
            notices,
            maxRecoveries,
            true,
            `Recovered after ${plural(notices.length, "failed attempt")}; answered by ${c.model}`,
            agentId,
          ),
        );
      events.push(
        pending(
          "LLM_OUTPUT",
          `Response from ${c.model}`,
          {
            output: outputText(turn),
            model: c.model,
            tokens_used: c.usage.totalTokens,
            cost_usd: c.costUsd,
            duration_ms: turn.durationMs,
          },
          agentId,
        ),
      );
      return { output: { ok: true, turn }, events };
    } catch (err) {
      if (ctx.signal.aborted || isAbortError(err)) throw err;
      if (err instanceof LlmError) {
        const events =
          notices.length > 0
            ? [
                recovery(
                  notices,
                  maxRecoveries,
                  false,
                  `Recovery failed after ${plural(notices.length + 1, "attempt")}`,
                  agentId,
                ),
              ]
            : [];
        return {
          output: {
            ok: false,
            errorType: "LLM_ERROR",
            message: err.message,
            retryCount: err.retryCount,
            maxRetries: err.maxRetries,
          },
          events,
        };
      }
      // Overrides the router refuses (validated at submit, but the configuration may have changed since).
      if (err instanceof ValidationError)
        return {
          output: { ok: false, errorType: "INVALID_INPUT", message: err.message, retryCount: 0, maxRetries: 0 },
        };
      throw err;
    }
  });
  if (!out.ok)
    throw new TaskFailure(out.errorType, out.message, { retryCount: out.retryCount, maxRetries: out.maxRetries });
  return out.turn;
}

/** The router's candidates; [] when it refuses the selection (the call then fails inside its step). */
export function candidates(ctx: FlowContext, selection: ModelSelection, tools: boolean): readonly ModelEntry[] {
  try {
    return ctx.llm.candidates({ ...selection, tools });
  } catch {
    return [];
  }
}

function retryError(notice: RetryNotice, maxRetries: number): EventPayloads["ERROR_OCCURRED"] {
  const data: EventPayloads["ERROR_OCCURRED"] = {
    error_type: "LLM_ERROR",
    error_message: notice.error.message,
    recoverable: true,
    retry_count: notice.attempt,
    max_retries: maxRetries,
    severity: "warning",
  };
  if (notice.action === "retry") data.retry_after = notice.delayMs / 1000;
  return data;
}

function recovery(
  notices: readonly RetryNotice[],
  maxRecoveries: number,
  success: boolean,
  message: string,
  agentId: string,
): PendingEvent {
  const attempt = notices.length;
  return pending(
    "ERROR_RECOVERY",
    message,
    {
      error_type: "LLM_ERROR",
      recovery_action: notices.some((n) => n.action === "fallback") ? "fallback" : "retry",
      attempt,
      max_attempts: Math.max(attempt, maxRecoveries),
      success,
    },
    agentId,
  );
}

/** What LLM_OUTPUT reports: the text, or the tool calls when the model only asked for tools. */
function outputText(turn: ModelTurn): string {
  if (turn.text !== "" || turn.toolCalls.length === 0) return turn.text;
  return turn.toolCalls.map((c) => `${c.name}(${JSON.stringify(c.arguments)})`).join("\n");
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? "" : "s"}`;
}

/**
 * Coalesces stream deltas into LLM_PARTIAL chunks: flushed at PARTIAL_MIN_CHARS characters once
 * PARTIAL_MIN_INTERVAL_MS passed since the previous partial (the first at once), or on a delta
 * arriving PARTIAL_MAX_WAIT_MS after the last flush, and at the end. Chunk indexes count from 0
 * per call and never repeat (a retry's chunks continue the count).
 */
export function partialEmitter(
  emit: (chunk: string, index: number, totalTokensSoFar: number) => void,
  now: () => number = Date.now,
): {
  push: (delta: StreamDelta) => void;
  flush: () => void;
} {
  let buffer = "";
  let tokens = 0;
  let index = 0;
  const started = now();
  let lastFlush: number | undefined;
  const flush = () => {
    if (buffer === "") return;
    emit(buffer, index++, tokens);
    buffer = "";
    lastFlush = now();
  };
  return {
    push(delta) {
      buffer += delta.text;
      tokens = delta.totalTokensSoFar;
      const since = now() - (lastFlush ?? started);
      const enough =
        buffer.length >= PARTIAL_MIN_CHARS && (lastFlush === undefined || since >= PARTIAL_MIN_INTERVAL_MS);
      if (enough || since >= PARTIAL_MAX_WAIT_MS) flush();
    },
    flush,
  };
}
