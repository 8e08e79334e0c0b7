import { useEffect, useMemo, useState } from "preact/hooks";
import { useRoute } from "preact-iso";
import { href, useClient } from "../client-context.ts";
import { ApprovalPanel } from "../components/approval-panel.tsx";
import { ErrorNote } from "../components/error-note.tsx";
import { StatusBadge } from "../components/status-badge.tsx";
import { Timeline } from "../components/timeline.tsx";
import { dateTime, isFinished, modeName, tokens, usd } from "../format.ts";
import { buildRows, pendingApprovals, usageOf } from "../timeline-rows.ts";
import { useAsync } from "../use-async.ts";
import { useTaskEvents } from "../use-task-events.ts";

const STATE_TEXT = {
  connecting: "connecting…",
  open: "live",
  reconnecting: "reconnecting…",
  ended: "ended",
  failed: "stream failed",
} as const;

export function TaskPage() {
  const client = useClient();
  const { params } = useRoute();
  const id = params.id!;
  const task = useAsync(() => client.getTask(id), [client, id]);
  const stream = useTaskEvents(client, id);
  const [cancelNote, setCancelNote] = useState<string | null>(null);
  const [cancelling, setCancelling] = useState(false);

  // The record also changes when its run starts (QUEUED → RUNNING, the mode chosen): a page opened
  // right after the submit reads it again once WORKFLOW_STARTED arrives, and again while it still
  // says QUEUED. A read that has not answered within a second is replaced (the latest wins,
  // use-async.ts), so one stuck request cannot leave the badge at QUEUED.
  const started = stream.events.some((e) => e.type === "WORKFLOW_STARTED");
  useEffect(() => {
    if (!started || task.data?.status !== "QUEUED") return;
    if (!task.loading) {
      task.reload();
      return;
    }
    const timer = setTimeout(task.reload, 1_000);
    return () => clearTimeout(timer);
  }, [started, task.data, task.loading]);
  // The task's own record changes at the end (status, result, usage): read it again then.
  useEffect(() => {
    if (stream.state === "ended") task.reload();
  }, [stream.state]);
  // …and again shortly while the record lags behind the stream's end.
  useEffect(() => {
    if (stream.state !== "ended" || !task.data || isFinished(task.data.status) || task.loading) return;
    const timer = setTimeout(task.reload, 1_000);
    return () => clearTimeout(timer);
  }, [stream.state, task.data, task.loading]);

  const rows = useMemo(() => buildRows(stream.events), [stream.events]);
  const usage = useMemo(() => usageOf(stream.events), [stream.events]);
  const approvals = useMemo(() => pendingApprovals(stream.events), [stream.events]);
  const t = task.data;
  const finished = (t && isFinished(t.status)) || stream.state === "ended";

  const cancel = async () => {
    setCancelling(true);
    try {
      const res = await client.cancelTask(id, "cancelled from the web console");
      setCancelNote(res.message);
    } catch (err) {
      setCancelNote((err as Error).message);
    } finally {
      setCancelling(false);
    }
  };

  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href={href("/")}>Tasks</a>
          </li>
          <li>{id}</li>
        </ul>
      </nav>
      <ErrorNote error={task.error} />
      <article data-testid="task-detail">
        <header class="toolbar">
          <h2 class="query">{t?.query ?? "…"}</h2>
          {t && <StatusBadge status={t.status} />}
          {!finished && (
            <button
              type="button"
              class="contrast outline"
              disabled={cancelling}
              onClick={() => void cancel()}
              data-testid="cancel"
            >
              Cancel task
            </button>
          )}
        </header>
        {cancelNote && <p data-testid="cancel-note">{cancelNote}</p>}
        {t && (
          <dl class="facts-grid">
            <dt>Mode</dt>
            <dd>{modeName(t.mode)}</dd>
            <dt>Session</dt>
            <dd>
              <a href={href(`/sessions/${t.session_id}`)} data-testid="session-link">
                {t.session_id}
              </a>
            </dd>
            <dt>Created</dt>
            <dd>{dateTime(t.created_at)}</dd>
            <dt>Updated</dt>
            <dd>{dateTime(t.updated_at)}</dd>
            {t.model_used && (
              <>
                <dt>Model</dt>
                <dd>
                  {t.model_used} ({t.provider})
                </dd>
              </>
            )}
            <dt>Usage</dt>
            <dd data-testid="usage">
              {t.usage
                ? `${tokens(t.usage.total_tokens)} · ${usd(t.usage.estimated_cost ?? 0)}`
                : `${tokens(usage.tokens)} · ${usd(usage.costUsd)} so far`}
            </dd>
          </dl>
        )}
        {t?.result !== undefined && (
          <section>
            <h3>Result</h3>
            <pre class="result" data-testid="result">
              {t.result}
            </pre>
          </section>
        )}
        {t?.error && (
          <p role="alert" class="error" data-testid="task-error">
            {t.error}
          </p>
        )}
      </article>
      {approvals.map((a) => (
        <ApprovalPanel key={a.approvalId} taskId={id} approval={a} />
      ))}
      <section>
        <div class="toolbar">
          <h3>Timeline</h3>
          <span
            class={`badge stream-${stream.state}`}
            data-testid="stream-state"
            data-received={stream.events.length}
            data-last-seq={stream.lastSeq}
          >
            {STATE_TEXT[stream.state]}
            {stream.detail ? `: ${stream.detail}` : ""}
          </span>
          <span class="muted" data-testid="live-usage">
            {tokens(usage.tokens)} · {usd(usage.costUsd)}
          </span>
        </div>
        <Timeline rows={rows} />
      </section>
    </>
  );
}
