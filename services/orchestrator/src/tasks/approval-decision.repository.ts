import type { Db } from "@tog/db";

// The decision on a pending approval (gRPC DecideApproval): the approval row and the signal
// that wakes the task's run, in one transaction. The run's own approval statements (request,
// wait, timeout) are in runtime/approval.repository.ts.

export interface ApprovalDecision {
  taskId: string;
  approvalId: string;
  userId: string;
  decision: "approved" | "denied";
  approvedBy: string;
  feedback?: string | undefined;
  modifiedAction?: string | undefined;
  runId?: string | undefined;
}

export type DecisionOutcome =
  | { kind: "decided" }
  /** No such task, or no such approval of that task. */
  | { kind: "not_found" }
  | { kind: "forbidden" }
  /** Already decided (or timed out): its status. */
  | { kind: "closed"; status: string };

export class ApprovalDecisionRepository {
  readonly #db: Db;

  constructor(options: { db: Db }) {
    this.#db = options.db;
  }

  /** `taskId` must be a UUID (the caller answers 404 otherwise). */
  decide(d: ApprovalDecision): Promise<DecisionOutcome> {
    return this.#db.$transaction(async (tx): Promise<DecisionOutcome> => {
      const task = await tx.task.findUnique({ where: { id: d.taskId }, select: { userId: true } });
      if (!task) return { kind: "not_found" };
      if (task.userId !== d.userId) return { kind: "forbidden" };
      // raw: row lock (FOR UPDATE), which Prisma's model API cannot take; two decisions serialize here.
      const approval = (
        await tx.$queryRaw<{ status: string }[]>`
        SELECT status FROM approvals WHERE id = ${d.approvalId} AND task_id = ${d.taskId}::uuid FOR UPDATE`
      )[0];
      if (!approval) return { kind: "not_found" };
      if (approval.status !== "pending") return { kind: "closed", status: approval.status };
      // raw: decided_at from the database clock, like requested_at and expires_at of the same row.
      await tx.$executeRaw`
        UPDATE approvals SET status = ${d.decision}, decided_at = now(), decided_by = ${d.approvedBy},
               comments = ${d.feedback ?? null}, modified_action = ${d.modifiedAction ?? null}, run_id = ${d.runId ?? null}
        WHERE id = ${d.approvalId}`;
      // raw: created_at from the database clock (Prisma fills now() in the client); the timeline orders by it.
      await tx.$executeRaw`
        INSERT INTO task_signals (task_id, name, payload)
        VALUES (${d.taskId}::uuid, 'approval', ${JSON.stringify({ approval_id: d.approvalId, decision: d.decision, by: d.approvedBy })}::jsonb)`;
      return { kind: "decided" };
    });
  }
}
