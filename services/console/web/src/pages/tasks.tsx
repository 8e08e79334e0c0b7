import { useLocation } from "preact-iso";
import { TASK_STATUS_FILTERS } from "../api.ts";
import { href, useClient } from "../client-context.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { Pager } from "../components/pager.tsx";
import { StatusBadge } from "../components/status-badge.tsx";
import { SubmitForm } from "../components/submit-form.tsx";
import { dateTime, modeName, tokens, usd } from "../format.ts";
import { useAsync } from "../use-async.ts";

const DEFAULT_PAGE_SIZE = 20;

export function TasksPage() {
  const client = useClient();
  const { query, route } = useLocation();
  const status = query.status ?? "";
  const offset = Math.max(0, Number(query.offset ?? 0) || 0);
  // ?limit= (1–100, the API's range) for longer or shorter pages; the default is the API's.
  const pageSize = Math.min(100, Math.max(1, Number(query.limit ?? DEFAULT_PAGE_SIZE) || DEFAULT_PAGE_SIZE));
  const list = useAsync(
    () => client.listTasks({ limit: pageSize, offset, status: status || undefined }),
    [client, status, offset, pageSize],
  );

  const go = (next: { status?: string; offset?: number }) => {
    const params = new URLSearchParams();
    const s = next.status ?? status;
    const o = next.offset ?? offset;
    if (s) params.set("status", s);
    if (o) params.set("offset", String(o));
    if (pageSize !== DEFAULT_PAGE_SIZE) params.set("limit", String(pageSize));
    const q = params.toString();
    route(href(`/${q ? `?${q}` : ""}`));
  };

  return (
    <>
      <section>
        <details open data-testid="submit-section">
          <summary>New task</summary>
          <SubmitForm onSubmitted={(id) => route(href(`/tasks/${id}`))} />
        </details>
      </section>
      <section>
        <div class="toolbar">
          <h2>Tasks</h2>
          <label class="inline">
            Status
            <select
              value={status}
              onChange={(e) => go({ status: (e.target as HTMLSelectElement).value, offset: 0 })}
              data-testid="status-filter"
            >
              <option value="">all</option>
              {TASK_STATUS_FILTERS.map((s) => (
                <option value={s}>{s.toLowerCase()}</option>
              ))}
            </select>
          </label>
          <button type="button" class="secondary outline" onClick={list.reload} data-testid="refresh">
            Refresh
          </button>
        </div>
        <ErrorNote error={list.error} />
        <div class="overflow-auto">
          <table class="striped" data-testid="task-table" aria-busy={list.loading && !list.data}>
            <thead>
              <tr>
                <th>Query</th>
                <th>Status</th>
                <th>Mode</th>
                <th>Created</th>
                <th>Usage</th>
              </tr>
            </thead>
            <tbody>
              {list.data?.tasks.map((t) => (
                <tr data-testid="task-row" key={t.task_id}>
                  <td>
                    <a href={href(`/tasks/${t.task_id}`)}>
                      {t.query.length > 80 ? `${t.query.slice(0, 80)}…` : t.query}
                    </a>
                  </td>
                  <td>
                    <StatusBadge status={t.status} />
                  </td>
                  <td>{modeName(t.mode)}</td>
                  <td>{dateTime(t.created_at)}</td>
                  <td>
                    {t.total_token_usage
                      ? `${tokens(t.total_token_usage.total_tokens)} · ${usd(t.total_token_usage.cost_usd)}`
                      : "—"}
                  </td>
                </tr>
              ))}
              {list.data && list.data.tasks.length === 0 && (
                <tr>
                  <td colSpan={5}>No tasks{status ? ` with status ${status.toLowerCase()}` : ""} yet.</td>
                </tr>
              )}
            </tbody>
          </table>
        </div>
        {list.data && (
          <Pager offset={offset} limit={pageSize} total={list.data.total_count} onPage={(o) => go({ offset: o })} />
        )}
      </section>
    </>
  );
}
