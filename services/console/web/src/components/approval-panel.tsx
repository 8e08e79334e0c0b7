import { useState } from "preact/hooks";
import { useClient } from "../client-context.ts";
import { show } from "../format.ts";
import type { PendingApproval } from "../timeline-rows.ts";

/** Approve or deny one pending approval (POST /approvals/decision). */
export function ApprovalPanel({ taskId, approval }: { taskId: string; approval: PendingApproval }) {
  const client = useClient();
  const [feedback, setFeedback] = useState("");
  const [busy, setBusy] = useState(false);
  const [outcome, setOutcome] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const decide = async (approved: boolean) => {
    setBusy(true);
    setError(null);
    try {
      const res = await client.decideApproval({
        workflow_id: taskId,
        approval_id: approval.approvalId,
        approved,
        ...(feedback.trim() ? { feedback: feedback.trim() } : {}),
      });
      setOutcome(approved ? `Approved. ${res.message}` : `Denied. ${res.message}`);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="approval" data-testid="approval" data-approval-id={approval.approvalId}>
      <header>
        <strong>Approval needed</strong> — {approval.toolName}: {approval.operation}{" "}
        {approval.riskLevel && <span class="badge">risk {approval.riskLevel}</span>}
      </header>
      {approval.details !== undefined && <pre class="details">{show(approval.details, 1000)}</pre>}
      {outcome ? (
        <p data-testid="approval-outcome">{outcome}</p>
      ) : (
        <>
          <input
            placeholder="Feedback (optional)"
            value={feedback}
            onInput={(e) => setFeedback((e.target as HTMLInputElement).value)}
            data-testid="approval-feedback"
          />
          <div class="actions">
            <button type="button" disabled={busy} onClick={() => void decide(true)} data-testid="approve">
              Approve
            </button>
            <button
              type="button"
              class="secondary"
              disabled={busy}
              onClick={() => void decide(false)}
              data-testid="deny"
            >
              Deny
            </button>
          </div>
        </>
      )}
      {error && (
        <p role="alert" class="error">
          {error}
        </p>
      )}
    </article>
  );
}
