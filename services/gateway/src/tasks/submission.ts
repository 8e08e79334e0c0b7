import type { SubmitTaskCommand } from "@tog/proto";
import { normalizeTaskContext, type SubmitTaskBody } from "@tog/api";

// A validated submission turned into the orchestrator's command. The context is stored
// normalized (libs/api task-context.ts, docs/api.md "Submitting a task"): every recognized key
// with a default gets it, top-level model controls win over the context's, `template_name` is
// folded into `template`, free-form keys are kept as they came.

export function toSubmitCommand(userId: string, body: SubmitTaskBody, streaming: boolean): SubmitTaskCommand {
  return {
    userId,
    query: body.query,
    sessionId: body.session_id ?? undefined,
    mode: body.mode ?? undefined,
    context: normalizeTaskContext(body.context, body),
    streaming,
  };
}
