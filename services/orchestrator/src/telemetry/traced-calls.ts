import { extractMessageContext, type ReceivedMessage } from "@tog/bus";
import { context, SpanKind, SpanStatusCode, spansExported, trace, withOptionalSpan, withSpan } from "@tog/core";
import type { LlmRouter } from "@tog/providers";
import type { ToolRegistry } from "@tog/tools";

// Spans of a task's steps, model calls (GenAI semantic conventions: operation, model,
// provider, input/output tokens) and tool calls. Made only when spans are exported
// (spansExported): without an exporter the runtime gets the very objects it passed in, so the
// hot path pays nothing (docs/decisions.md, "Tracing").

/** The model router, with one CLIENT span per completion (`chat <model>`). */
export function tracedLlm(llm: LlmRouter): LlmRouter {
  if (!spansExported()) return llm;
  const traced: LlmRouter = Object.create(llm) as LlmRouter;
  traced.complete = (options) =>
    withSpan(
      "chat",
      async (span) => {
        const c = await llm.complete(options);
        span.updateName(`chat ${c.model}`);
        span.setAttributes({
          "gen_ai.response.model": c.model,
          "gen_ai.request.model": c.model,
          "gen_ai.provider.name": c.provider,
          "gen_ai.usage.input_tokens": c.usage.inputTokens,
          "gen_ai.usage.output_tokens": c.usage.outputTokens,
        });
        return c;
      },
      {
        kind: SpanKind.CLIENT,
        attributes: {
          "gen_ai.operation.name": "chat",
          ...(options.modelOverride ? { "gen_ai.request.model": options.modelOverride } : {}),
          ...(options.tier ? { "tog.model.tier": options.tier } : {}),
        },
      },
    );
  return traced;
}

/** The tool registry, with one span per invocation (`execute_tool <name>`). */
export function tracedTools(tools: ToolRegistry): ToolRegistry {
  if (!spansExported()) return tools;
  const traced: ToolRegistry = Object.create(tools) as ToolRegistry;
  traced.invoke = (name, rawArgs, options) =>
    withSpan(
      `execute_tool ${name}`,
      async (span) => {
        const result = await tools.invoke(name, rawArgs, options);
        if (!result.ok) span.setStatus({ code: SpanStatusCode.ERROR, message: result.errorType });
        return result;
      },
      { attributes: { "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": name } },
    );
  return traced;
}

/** Runs one task step inside a `step <kind> <name>` span (when spans are exported). */
export function tracedStep<T>(
  key: string,
  meta: { kind: string; name?: string | null | undefined },
  fn: () => Promise<T>,
): Promise<T> {
  return withOptionalSpan(`step ${meta.kind}${meta.name ? ` ${meta.name}` : ""}`, () => fn(), {
    attributes: { "tog.step.key": key, "tog.step.kind": meta.kind },
  });
}

/**
 * One CONSUMER span per event-persister batch (messaging conventions for batch receiving): linked
 * to the producer span of every message; a child of the producer's trace when the whole batch
 * belongs to one trace (the usual case for one running task), else a root span.
 */
export function tracedPersist<T>(msgs: readonly ReceivedMessage[], fn: () => Promise<T>): Promise<T> {
  if (!spansExported()) return fn();
  const contexts = msgs.map((m) => trace.getSpanContext(extractMessageContext(m))).filter((c) => c !== undefined);
  const traces = new Set(contexts.map((c) => c.traceId));
  const first = msgs[0];
  const parent = traces.size === 1 && first ? extractMessageContext(first) : trace.deleteSpan(context.active());
  return withSpan("process events", () => fn(), {
    parent,
    kind: SpanKind.CONSUMER,
    links: contexts.map((c) => ({ context: c })),
    attributes: {
      "messaging.system": "nats",
      "messaging.operation.type": "process",
      "messaging.batch.message_count": msgs.length,
    },
  });
}
