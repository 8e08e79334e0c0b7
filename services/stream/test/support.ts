import { randomUUID } from "node:crypto";
import { createLogger, type Logger } from "@tog/core";
import { publish, systemSubjects, type Bus } from "@tog/bus";
import type { Db } from "@tog/db";
import {
  buildEvent,
  eventsMessageId,
  eventsMessageOf,
  terminalErrorData,
  WORKFLOW_AGENT_ID,
  type TaskEvent,
} from "@tog/events";
import type { HubEvent } from "../src/hub/hub-event.ts";
import type { HubSubscriber } from "../src/hub/task-hub.ts";

export const silentLogger: Logger = createLogger({ service: "stream-test", level: "silent" });
export const TRACE_ID = "0af7651916cd43dd8448eb211c80319c";

/** Event `seq` of a task; `last` makes it the terminal WORKFLOW_COMPLETED. */
export function makeEvent(taskId: string, seq: number, options: { last?: boolean; failed?: boolean } = {}): TaskEvent {
  if (options.failed) {
    return buildEvent({
      workflow_id: taskId,
      type: "ERROR_OCCURRED",
      agent_id: WORKFLOW_AGENT_ID,
      message: "failed",
      seq,
      trace_id: TRACE_ID,
      data: terminalErrorData({ status: "FAILED", error_type: "LLM_ERROR", error_message: "boom" }),
    });
  }
  if (options.last) {
    return buildEvent({
      workflow_id: taskId,
      type: "WORKFLOW_COMPLETED",
      agent_id: WORKFLOW_AGENT_ID,
      message: "done",
      seq,
      trace_id: TRACE_ID,
      data: {
        result: "the answer",
        duration_ms: 5,
        total_tokens: 3,
        total_cost_usd: 0,
        agents_used: 1,
        tools_invoked: 0,
      },
    });
  }
  return buildEvent({
    workflow_id: taskId,
    type: seq % 5 === 0 ? "PROGRESS" : "LLM_PARTIAL",
    agent_id: "agent-1",
    message: `event ${seq}`,
    seq,
    trace_id: TRACE_ID,
    data:
      seq % 5 === 0
        ? { percentage: 50, current_step: seq, total_steps: 100, current_task: "x" }
        : { chunk: `chunk ${seq} "quoted" é 🌍`, chunk_index: seq, total_tokens_so_far: seq },
  } as never);
}

/**
 * Publishes a task's events the way a worker does: JetStream, msg id, conditional on the
 * subject's last sequence, `perMessage` events to a message (docs/decisions.md "One message per
 * write").
 */
export class WorkerDouble {
  readonly taskId: string;
  readonly #bus: Bus;
  readonly #perMessage: number;
  #lastStreamSeq = 0;
  seq = 0;
  readonly published: TaskEvent[] = [];

  constructor(bus: Bus, taskId = randomUUID(), perMessage = 1) {
    this.#bus = bus;
    this.taskId = taskId;
    this.#perMessage = perMessage;
  }

  /** After the cache expired the subject's messages, the next publish expects none (as workers do). */
  forgetPosition(): void {
    this.#lastStreamSeq = 0;
  }

  get subject(): string {
    return systemSubjects(this.#bus.prefix).events(this.taskId);
  }

  async emit(count = 1, options: { last?: boolean; failed?: boolean } = {}): Promise<TaskEvent[]> {
    const out: TaskEvent[] = [];
    for (let i = 0; i < count; i++) out.push(makeEvent(this.taskId, ++this.seq, i === count - 1 ? options : {}));
    for (let i = 0; i < out.length; i += this.#perMessage) {
      const events = out.slice(i, i + this.#perMessage);
      const text = eventsMessageOf(events.map((e) => JSON.stringify(e)));
      const ack = await publish(this.#bus, this.subject, new TextEncoder().encode(text), {
        msgID: eventsMessageId(events),
        expect: { lastSubjectSequence: this.#lastStreamSeq },
      });
      this.#lastStreamSeq = ack.seq;
    }
    this.published.push(...out);
    return out;
  }
}

/** Writes events into the permanent log, as the orchestrator's persister does. */
export async function persist(db: Db, events: readonly TaskEvent[]): Promise<void> {
  for (const e of events) {
    await db.$executeRaw`
      INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
      VALUES (${e.workflow_id}::uuid, ${e.seq}, ${e.type}, ${e.agent_id}, ${e.timestamp}::timestamptz, ${JSON.stringify(e)}::json)
      ON CONFLICT DO NOTHING`;
  }
}

/** A subscriber that records what it is given. */
export class Recorder implements HubSubscriber {
  delivered: number;
  closed = false;
  ended = false;
  readonly events: HubEvent[] = [];

  constructor(resumeAfter = 0) {
    this.delivered = resumeAfter;
  }

  push(event: HubEvent): void {
    this.delivered = event.seq;
    this.events.push(event);
    if (event.terminal) this.closed = true;
  }

  end(): void {
    this.ended = true;
    this.closed = true;
  }

  get seqs(): number[] {
    return this.events.map((e) => e.seq);
  }
}

export const range = (from: number, to: number): number[] =>
  Array.from({ length: Math.max(0, to - from + 1) }, (_, i) => from + i);

export async function waitUntil(
  check: () => boolean | Promise<boolean>,
  timeoutMs = 10_000,
  what = "condition",
): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}
