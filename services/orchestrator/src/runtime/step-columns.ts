import { sqlArray } from "@tog/db";
import type { TaskEvent } from "@tog/events";
import { eventColumns } from "../events/event.repository.ts";
import { eventRowOf } from "../events/event-row.ts";
import { jsonLines } from "./json-lines.ts";
import type { StepRecord } from "./run.repository.ts";

/**
 * A step's columns of `task_steps` after `task_id`, in table order, as the `unnest` batches of
 * checkpoints and final writes take them (JSON as text, times as ISO strings). Not its events:
 * they go into `task_events` in the same statement (stepEventColumns), and the row keeps their
 * seq range, by which a later run finds them in the log (docs/performance.md "Each event's
 * JSON once").
 */
export function stepColumns(step: StepRecord): unknown[] {
  return [
    step.key,
    step.kind,
    step.name,
    step.agentId,
    step.status,
    step.output === undefined ? null : JSON.stringify(step.output),
    step.firstSeq,
    step.lastSeq,
    step.startedAt.toISOString(),
    step.completedAt.toISOString(),
  ];
}

/** Where `output` sits among `stepColumns`. */
const STEP_OUTPUT = 5;

/**
 * A statement's columns, built row by row, with the `stepColumns` starting at index `at`: the
 * steps' JSON column (output) goes as lines (json-lines.ts), the rest as array literals
 * (libs/db `sqlArray`).
 */
export function withStepJsonAsLines(columns: readonly unknown[][], at: number): unknown[] {
  return columns.map((column, k) =>
    k === at + STEP_OUTPUT ? jsonLines(column as (string | null)[]) : sqlArray(column),
  );
}

/**
 * Events as the columns of `task_events` (event.repository.ts `eventColumns`), each event's JSON
 * text (the one it is published with) as lines (json-lines.ts).
 */
export function eventLogColumns(events: readonly TaskEvent[]): unknown[] {
  const columns = eventColumns(events.map(eventRowOf));
  return [...columns.slice(0, 5).map(sqlArray), jsonLines(columns[5] as string[])];
}

/**
 * The steps' events as `eventLogColumns`: the statement that writes the steps puts their events
 * in the permanent log too, so an event is in the log before it is published
 * (docs/performance.md "The log before the bus").
 */
export function stepEventColumns(steps: readonly StepRecord[]): unknown[] {
  return eventLogColumns(steps.flatMap((step) => step.events ?? []));
}
