import { useLocation } from "preact-iso";
import { href, useClient } from "../client-context.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { Pager } from "../components/pager.tsx";
import { dateTime, shortId, tokens, usd } from "../format.ts";
import { useAsync } from "../use-async.ts";

const PAGE_SIZE = 20;

export function SessionsPage() {
  const client = useClient();
  const { query, route } = useLocation();
  const offset = Math.max(0, Number(query.offset ?? 0) || 0);
  const list = useAsync(() => client.listSessions({ limit: PAGE_SIZE, offset }), [client, offset]);

  return (
    <section>
      <div class="toolbar">
        <h2>Sessions</h2>
        <button type="button" class="secondary outline" onClick={list.reload}>
          Refresh
        </button>
      </div>
      <ErrorNote error={list.error} />
      <div class="overflow-auto">
        <table class="striped" data-testid="session-table" aria-busy={list.loading && !list.data}>
          <thead>
            <tr>
              <th>Session</th>
              <th>Tasks</th>
              <th>Tokens</th>
              <th>Cost</th>
              <th>Created</th>
            </tr>
          </thead>
          <tbody>
            {list.data?.sessions.map((s) => (
              <tr data-testid="session-row" key={s.session_id}>
                <td>
                  <a href={href(`/sessions/${s.session_id}`)}>{s.title || s.external_id || shortId(s.session_id)}</a>
                </td>
                <td>{s.task_count}</td>
                <td>
                  {tokens(s.tokens_used)} of {s.token_budget.toLocaleString()}
                </td>
                <td>{s.total_cost_usd !== undefined ? usd(s.total_cost_usd) : "—"}</td>
                <td>{dateTime(s.created_at)}</td>
              </tr>
            ))}
            {list.data && list.data.sessions.length === 0 && (
              <tr>
                <td colSpan={5}>No sessions yet: each task starts one unless you name one.</td>
              </tr>
            )}
          </tbody>
        </table>
      </div>
      {list.data && (
        <Pager
          offset={offset}
          limit={PAGE_SIZE}
          total={list.data.total_count}
          onPage={(o) => route(href(`/sessions${o ? `?offset=${o}` : ""}`))}
        />
      )}
    </section>
  );
}
