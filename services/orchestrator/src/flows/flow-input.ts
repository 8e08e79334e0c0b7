import type { ChatMessage } from "@tog/providers";
import type { WorkflowOutcome } from "../runtime/flow-context.ts";
import type { TaskPlan } from "./task-plan.ts";

/** What every mode flow starts from (built by taskWorkflow). */
export interface FlowInput {
  plan: TaskPlan;
  /** Earlier turns of the session, checkpointed in the `history` step. */
  history: readonly ChatMessage[];
  /** The approver's `modified_action` on the task approval, passed to the agents as an instruction. */
  instruction: string | undefined;
}

export type ResponseMode = WorkflowOutcome["mode"];
