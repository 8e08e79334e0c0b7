import type { MsgHdrs } from "@nats-io/transport-node";
import { SpanKind, extractTraceContext, withSpan, type Context, type Span } from "@tog/core";

/** What trace extraction needs of a received message (core Msg and JsMsg both fit). */
export interface ReceivedMessage {
  subject: string;
  headers?: MsgHdrs | undefined;
}

/** The trace context a message was published in (or the active one when it carries none or an invalid one). */
export function extractMessageContext(msg: ReceivedMessage): Context {
  const carrier: Record<string, string> = {};
  if (msg.headers) {
    for (const [key, values] of msg.headers) {
      const v = values[0];
      if (v !== undefined) carrier[key.toLowerCase()] = v;
    }
  }
  return extractTraceContext(carrier);
}

/**
 * Runs fn in a CONSUMER span that continues the message's trace, so its logs and
 * anything it publishes carry the publisher's trace id.
 */
export function withMessageContext<T>(
  msg: ReceivedMessage,
  fn: (span: Span) => Promise<T> | T,
  options: { spanName?: string; attributes?: Record<string, string | number | boolean> } = {},
): Promise<T> {
  return withSpan(options.spanName ?? "bus.process", fn, {
    parent: extractMessageContext(msg),
    kind: SpanKind.CONSUMER,
    attributes: { "messaging.system": "nats", "messaging.destination.name": msg.subject, ...options.attributes },
  });
}
