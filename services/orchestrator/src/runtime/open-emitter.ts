import type { Bus } from "@tog/bus";
import type { Logger } from "@tog/core";
import type { TaskEvent } from "@tog/events";
import { busPosition } from "./bus-position.ts";
import { TaskEventEmitter } from "./event-emitter.ts";
import type { RunRepository, StepRecord } from "./run.repository.ts";

// Where a run's events continue, so a task's seq stays gap-free across runs (docs/reliability.md).
//
// A first run starts at seq 1; a later run (after a crash or a shutdown) continues after
// everything already on the bus, in the permanent log or committed with a checkpoint, and first
// publishes the committed events the bus never got ("Worker crash").

export interface EmitterDeps {
  bus: Bus;
  runs: RunRepository;
  onEventPublished?: ((event: TaskEvent) => void) | undefined;
  /**
   * How long the bus keeps an event (EVENTS_MAX_AGE_SECONDS): a logged event older than that,
   * missing from the bus, has aged out rather than never reached it, and is not sent again.
   */
  eventsMaxAgeMs?: number | undefined;
  /** EVENT_MESSAGES: one message per write (default) or per event (event-emitter.ts). */
  eventMessages?: "per-write" | "per-event" | undefined;
}

/** Margin for the clocks of the worker that made an event and of the NATS server that ages it. */
const AGE_MARGIN_MS = 60_000;

/** Writes a run's staged lazy steps (event-emitter.ts) under its lease. */
export type StagedWriter = (steps: StepRecord[]) => Promise<void>;

/** A run's writers under its lease: staged steps, and live events into the log. */
export interface RunWriters {
  writeStaged: StagedWriter;
  logLive: (events: TaskEvent[]) => Promise<void>;
}

/** The emitter of a run: fresh for a first run, reopened (openEmitter) for a later one. */
export function runEmitter(
  deps: EmitterDeps,
  task: { id: string; traceId: string; attempts: number },
  steps: ReadonlyMap<string, StepRecord>,
  logger: Logger,
  onFailure: (error: Error) => void,
  writers?: RunWriters,
): Promise<TaskEventEmitter> {
  // A first run has nothing to recover: no step was checkpointed and no event published (only
  // the worker holding the claim writes them). Saves two round trips per task.
  if (task.attempts === 1) {
    return Promise.resolve(
      new TaskEventEmitter({
        bus: deps.bus,
        taskId: task.id,
        traceId: task.traceId,
        defaultAgentId: "orchestrator",
        start: { lastSeq: 0, lastStreamSeq: 0 },
        logger,
        onFailure,
        onPublished: deps.onEventPublished,
        perEvent: deps.eventMessages === "per-event",
        ...writers,
      }),
    );
  }
  return openEmitter(deps, task.id, task.traceId, steps, logger, onFailure, writers);
}

/**
 * Re-establishes the emitter of a task that ran before: the next seq follows everything already
 * on the bus, in the permanent log or committed with a checkpoint, and events the bus never
 * received — logged or committed by a run that stopped before publishing them — are published
 * first.
 */
export async function openEmitter(
  deps: EmitterDeps,
  taskId: string,
  traceId: string,
  steps: ReadonlyMap<string, StepRecord>,
  logger: Logger,
  onFailure: (error: Error) => void,
  writers?: RunWriters,
): Promise<TaskEventEmitter> {
  const [position, persisted] = await Promise.all([busPosition(deps.bus, taskId), deps.runs.persistedLastSeq(taskId)]);
  const delivered = Math.max(position.lastSeq, persisted);
  let lastSeq = delivered;
  const missing = new Map<number, TaskEvent>();
  // The log is written before the bus, so the log above the bus's last seq is what a stopped
  // run logged but did not publish — unless the bus aged those messages out (then it holds
  // nothing newer either): only events younger than the bus's retention are sent again.
  if (persisted > position.lastSeq) {
    const since = deps.eventsMaxAgeMs === undefined ? -Infinity : Date.now() - deps.eventsMaxAgeMs + AGE_MARGIN_MS;
    for (const event of await deps.runs.loggedEventsAfter(taskId, position.lastSeq))
      if (Date.parse(event.timestamp) > since) missing.set(event.seq, event);
  }
  // Steps committed by a release that did not log their events with them.
  for (const step of steps.values()) {
    if (step.lastSeq !== null && step.lastSeq > lastSeq) lastSeq = step.lastSeq;
    for (const event of step.events ?? []) if (event.seq > delivered) missing.set(event.seq, event);
  }
  const resend = [...missing.values()].sort((a, b) => a.seq - b.seq);
  const emitter = new TaskEventEmitter({
    bus: deps.bus,
    taskId: taskId,
    traceId,
    defaultAgentId: "orchestrator",
    start: { lastSeq: delivered, lastStreamSeq: position.lastStreamSeq },
    logger,
    onFailure,
    onPublished: deps.onEventPublished,
    perEvent: deps.eventMessages === "per-event",
    ...writers,
  });
  if (resend.length > 0) {
    logger.info(
      { count: resend.length, fromSeq: resend[0]!.seq },
      "republishing committed events the bus never received",
    );
    await emitter.republish(resend);
  }
  // Seqs a crashed worker allocated to live events it never published are free again: the next
  // event takes the first seq after everything delivered or committed, so there is no gap.
  if (emitter.lastSeq < lastSeq)
    throw new Error(`committed events of ${taskId} end at seq ${lastSeq}, bus at ${emitter.lastSeq}`);
  return emitter;
}
