import { eventMessageId, type TaskEvent } from "./envelope.ts";

// One message on a task's event subject carries the events of one write: their JSON texts
// joined by line feeds (docs/decisions.md "One message per write"). `JSON.stringify` never
// writes a raw line feed, so splitting on it gives back exactly the texts that were joined, and
// a message of one event is that event's text, as every earlier release published it. Every
// reader of the subject goes through `eventTextsOf`.

const SEPARATOR = "\n";

/** The texts of the events in one message, in seq order. */
export function eventTextsOf(message: string): string[] {
  return message.split(SEPARATOR);
}

/** The message that carries `texts` (each one event's JSON, in seq order). */
export function eventsMessageOf(texts: readonly string[]): string {
  return texts.join(SEPARATOR);
}

/** The last event text of a message (the whole message when it holds one event). */
export function lastEventTextOf(message: string): string {
  const at = message.lastIndexOf(SEPARATOR);
  return at < 0 ? message : message.slice(at + 1);
}

/** The first event text of a message (the whole message when it holds one event). */
export function firstEventTextOf(message: string): string {
  const at = message.indexOf(SEPARATOR);
  return at < 0 ? message : message.slice(0, at);
}

/**
 * JetStream `Nats-Msg-Id` of a message: `<task>:<seq>` for one event (what earlier releases
 * used), `<task>:<first>-<last>` for several, so a retried publish of the same write is
 * deduplicated.
 */
export function eventsMessageId(events: readonly Pick<TaskEvent, "workflow_id" | "seq">[]): string {
  const first = events[0];
  const last = events.at(-1);
  if (!first || !last) throw new Error("a message carries at least one event");
  return first === last ? eventMessageId(first) : `${first.workflow_id}:${first.seq}-${last.seq}`;
}
