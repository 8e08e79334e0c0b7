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
