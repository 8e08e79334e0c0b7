import { executionModeOf, type ExecutionMode } from "@tog/proto";
import type { StepRecord } from "./run.repository.ts";

/**
 * The execution mode a run chose, when these steps hold its WORKFLOW_STARTED. Step `start` is
 * lazy: it is written with the next checkpoint, the staged write before a live event, or the
 * final write, and whichever write carries it also records the mode on the task.
 */
export function executionModeIn(steps: readonly StepRecord[]): ExecutionMode | undefined {
  for (const step of steps)
    for (const event of step.events ?? [])
      if (event.type === "WORKFLOW_STARTED") return executionModeOf((event.data as { mode: string }).mode);
  return undefined;
}
