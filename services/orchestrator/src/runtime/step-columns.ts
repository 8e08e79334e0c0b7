import { eventColumns } from "../events/event.repository.ts";
import { eventRowOf } from "../events/event-row.ts";
import type { StepRecord } from "./run.repository.ts";

/**
 * A step's columns of `task_steps` after `task_id`, in table order, as the `unnest` batches of
 * checkpoints and final writes take them (JSON as text, times as ISO strings).
 */
export function stepColumns(step: StepRecord): unknown[] {
  return [
    step.key,
    step.kind,
    step.name,
    step.agentId,
    step.status,
    step.output === undefined ? null : JSON.stringify(step.output),
    step.events === null ? null : JSON.stringify(step.events),
    step.firstSeq,
    step.lastSeq,
    step.startedAt.toISOString(),
    step.completedAt.toISOString(),
  ];
}

/**
 * The steps' events as the columns of `task_events` (event.repository.ts `eventColumns`): the
 * statement that writes the steps puts their events in the permanent log too, so an event is
 * in the log before it is published (docs/performance.md "The log before the bus").
 */
export function stepEventColumns(steps: readonly StepRecord[]): unknown[][] {
  return eventColumns(steps.flatMap((step) => (step.events ?? []).map(eventRowOf)));
}
