import type { Db } from "@tog/db";

// Approvals as the runtime sees them. The decision is written by the orchestrator's approval
// decision (decideApproval, tasks/task.service.ts); the run polls the row (and wakes on a core NATS
// hint), so a worker that restarts mid-wait still finds a decision made while it was down.

export interface ApprovalRow {
  id: string;
  status: "pending" | "approved" | "denied" | "timeout";
  expiresAt: Date;
  decidedBy: string | null;
  comments: string | null;
  modifiedAction: string | null;
}

export interface NewApproval {
  id: string;
  workflowId: string;
  toolName: string;
  operation: string;
  riskLevel: string;
  details: Record<string, unknown>;
  timeoutSeconds: number;
}

export class ApprovalRepository {
  readonly #db: Db;

  constructor(options: { db: Db }) {
    this.#db = options.db;
  }

  /** Creates the approval once; a replay finds the existing row. */
  async ensure(approval: NewApproval): Promise<ApprovalRow> {
    await this.#db.$executeRaw`
      INSERT INTO approvals (id, workflow_id, status, tool_name, operation, risk_level, details, timeout_seconds, expires_at)
      VALUES (${approval.id}, ${approval.workflowId}::uuid, 'pending', ${approval.toolName}, ${approval.operation},
              ${approval.riskLevel}, ${JSON.stringify(approval.details)}::jsonb, ${approval.timeoutSeconds},
              now() + ${approval.timeoutSeconds} * interval '1 second')
      ON CONFLICT (id) DO NOTHING`;
    const row = await this.get(approval.id);
    if (!row) throw new Error(`approval ${approval.id} vanished`);
    return row;
  }

  async get(id: string): Promise<ApprovalRow | null> {
    const rows = await this.#db.$queryRaw<
      {
        id: string;
        status: ApprovalRow["status"];
        expires_at: Date;
        decided_by: string | null;
        comments: string | null;
        modified_action: string | null;
      }[]
    >`SELECT id, status, expires_at, decided_by, comments, modified_action FROM approvals WHERE id = ${id}`;
    const r = rows[0];
    return r
      ? {
          id: r.id,
          status: r.status,
          expiresAt: r.expires_at,
          decidedBy: r.decided_by,
          comments: r.comments,
          modifiedAction: r.modified_action,
        }
      : null;
  }

  /** pending → timeout, unless a decision got there first; returns the row as it ends up. */
  async expire(id: string): Promise<ApprovalRow | null> {
    await this.#db.$executeRaw`
      UPDATE approvals SET status = 'timeout', decided_at = now(), decided_by = 'system'
      WHERE id = ${id} AND status = 'pending' AND expires_at <= now()`;
    return this.get(id);
  }
}
