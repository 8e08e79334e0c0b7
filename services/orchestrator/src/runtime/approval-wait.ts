import { createHash } from "node:crypto";
import type { ApprovalRepository, ApprovalRow } from "./approval.repository.ts";
import type { ApprovalOutcome, ApprovalRequest, FlowContext, PendingEvent } from "./flow-context.ts";
import { throwIfStopped } from "./stop-reason.ts";

// A human approval inside a run, durable across worker restarts (docs/decisions.md, "Approvals").
//
// The request and the decision are two checkpointed steps, so a resumed run finds both; in
// between the run waits for the decision the orchestrator writes to the approval's row, woken by
// the task's signal hint or a poll, so a decision made while no worker was listening is found.

export interface ApprovalWait {
  approvals: ApprovalRepository;
  taskId: string;
  /** The step key prefix of the context asking (a child task's approvals are its own). */
  keyPrefix: string;
  /** The asking context's `step`: the request and the decision are checkpointed there. */
  step: FlowContext["step"];
  signal: AbortSignal;
  /** Called on every signal hint of the run (run-watch.ts). */
  wakers: Set<() => void>;
  /** Of a request that names none (APPROVAL_TIMEOUT_SECONDS). */
  defaultTimeoutSeconds: number;
  /** How often a waiting approval re-reads its row besides the wake-ups. */
  pollMs: number;
}

/** What a request for approval reports: APPROVAL_REQUESTED, then WAITING for the decision. */
export function approvalRequestEvents(
  approvalId: string,
  request: ApprovalRequest,
  timeoutSeconds: number,
): [PendingEvent<"APPROVAL_REQUESTED">, PendingEvent<"WAITING">] {
  return [
    {
      type: "APPROVAL_REQUESTED",
      message: `Approval ${approvalId} requested: ${request.operation}`,
      data: {
        approval_id: approvalId,
        tool_name: request.toolName,
        operation: request.operation,
        risk_level: request.riskLevel,
        timeout_seconds: timeoutSeconds,
        details: request.details as never,
      },
    },
    {
      type: "WAITING",
      message: `Waiting for approval ${approvalId}`,
      data: {
        waiting_for: "approval",
        wait_reason: `Human approval of: ${request.operation}`,
        estimated_wait_seconds: timeoutSeconds,
      },
    },
  ];
}

export async function requestApproval(wait: ApprovalWait, request: ApprovalRequest): Promise<ApprovalOutcome> {
  const { step, taskId } = wait;
  const timeoutSeconds = request.timeoutSeconds ?? wait.defaultTimeoutSeconds;
  // Derived from the task and the step, so a resumed run finds the same approval.
  const approvalId = `apr_${createHash("sha256").update(`${taskId}:${wait.keyPrefix}${request.key}`).digest("hex").slice(0, 24)}`;
  await step(`approval:${request.key}:requested`, { kind: "approval", name: request.toolName }, async () => {
    await wait.approvals.ensure({
      id: approvalId,
      taskId: taskId,
      toolName: request.toolName,
      operation: request.operation,
      riskLevel: request.riskLevel,
      details: request.details,
      timeoutSeconds,
    });
    return {
      output: { approvalId },
      events: approvalRequestEvents(approvalId, request, timeoutSeconds),
    };
  });

  return step(`approval:${request.key}`, { kind: "approval", name: "decision" }, async () => {
    const row = await waitForDecision(wait, approvalId);
    const decision = row.status === "approved" ? "approved" : row.status === "denied" ? "denied" : "timeout";
    const approvedBy = row.decidedBy ?? "system";
    const comments = row.comments ?? "";
    const outcome: ApprovalOutcome =
      decision === "approved"
        ? {
            decision,
            approvalId,
            approvedBy,
            comments,
            ...(row.modifiedAction ? { modifiedAction: row.modifiedAction } : {}),
          }
        : { decision, approvalId, approvedBy, comments };
    return {
      output: outcome,
      events: [
        {
          type: "APPROVAL_DECISION",
          message: `Approval ${approvalId} ${decision}`,
          data: {
            approval_id: approvalId,
            decision,
            approved_by: approvedBy,
            timestamp: new Date().toISOString(),
            comments,
          },
        } satisfies PendingEvent<"APPROVAL_DECISION">,
      ],
    };
  });
}

/** Until the row is decided or expired (then marked `timeout`), or the run stops. */
async function waitForDecision(wait: ApprovalWait, approvalId: string): Promise<ApprovalRow> {
  const { approvals, signal } = wait;
  for (;;) {
    throwIfStopped(signal);
    let row = await approvals.get(approvalId);
    if (!row) throw new Error(`approval ${approvalId} not found`);
    if (row.status === "pending" && row.expiresAt.getTime() <= Date.now())
      row = (await approvals.expire(approvalId)) ?? row;
    if (row.status !== "pending") return row;
    const waitMs = Math.max(10, Math.min(wait.pollMs, row.expiresAt.getTime() - Date.now()));
    await new Promise<void>((resolve) => {
      const done = () => {
        clearTimeout(timer);
        wait.wakers.delete(done);
        signal.removeEventListener("abort", done);
        resolve();
      };
      const timer = setTimeout(done, waitMs);
      wait.wakers.add(done);
      signal.addEventListener("abort", done, { once: true });
    });
  }
}
