import { useState } from "preact/hooks";
import { useLocation, useRoute } from "preact-iso";
import { href, useClient } from "../client-context.ts";
import { ErrorNote } from "../components/error-note.tsx";
import { Pager } from "../components/pager.tsx";
import { SubmitForm } from "../components/submit-form.tsx";
import { dateTime, ms, tokens, usd } from "../format.ts";
import { useAsync } from "../use-async.ts";

const TURNS_PER_PAGE = 10;

export function SessionPage() {
  const client = useClient();
  const { params } = useRoute();
  const { query, route } = useLocation();
  const id = params.id!;
  const offset = Math.max(0, Number(query.offset ?? 0) || 0);
  const session = useAsync(() => client.getSession(id), [client, id]);
  const turns = useAsync(() => client.sessionTurns(id, { limit: TURNS_PER_PAGE, offset }), [client, id, offset]);
  const [title, setTitle] = useState<string | null>(null);
  const [note, setNote] = useState<string | null>(null);
  const [error, setError] = useState<string | null>(null);

  const s = session.data;
  const rename = async (e: Event) => {
    e.preventDefault();
    setError(null);
    try {
      const res = await client.renameSession(id, title ?? "");
      setNote(`Renamed to “${res.title}”.`);
      setTitle(null);
      session.reload();
    } catch (err) {
      setError((err as Error).message);
    }
  };
  const remove = async () => {
    if (!window.confirm("Delete this session? Its tasks stay in the task list.")) return;
    try {
      await client.deleteSession(id);
      route(href("/sessions"));
    } catch (err) {
      setError((err as Error).message);
    }
  };

  return (
    <>
      <nav aria-label="breadcrumb">
        <ul>
          <li>
            <a href={href("/sessions")}>Sessions</a>
          </li>
          <li>{id}</li>
        </ul>
      </nav>
      <ErrorNote error={session.error} />
      {s && (
        <article data-testid="session-detail">
          <header class="toolbar">
            <h2 data-testid="session-title">{s.title || s.external_id || "Untitled session"}</h2>
            <button type="button" class="contrast outline" onClick={() => void remove()} data-testid="delete-session">
              Delete
            </button>
          </header>
          <dl class="facts-grid">
            <dt>Id</dt>
            <dd>{s.session_id}</dd>
            {s.external_id && (
              <>
                <dt>External id</dt>
                <dd>{s.external_id}</dd>
              </>
            )}
            <dt>Tasks</dt>
            <dd>{s.task_count}</dd>
            <dt>Tokens</dt>
            <dd>
              {tokens(s.tokens_used)} of {s.token_budget.toLocaleString()}
            </dd>
            {s.total_cost_usd !== undefined && (
              <>
                <dt>Cost</dt>
                <dd>{usd(s.total_cost_usd)}</dd>
              </>
            )}
            <dt>Created</dt>
            <dd>{dateTime(s.created_at)}</dd>
          </dl>
          <form class="inline-form" onSubmit={rename} data-testid="rename-form">
            <input
              name="title"
              maxLength={60}
              placeholder="New title (at most 60 characters)"
              value={title ?? ""}
              onInput={(e) => setTitle((e.target as HTMLInputElement).value)}
              data-testid="rename-input"
            />
            <button type="submit" class="secondary" data-testid="rename">
              Rename
            </button>
          </form>
          {note && <p data-testid="session-note">{note}</p>}
          {error && (
            <p role="alert" class="error" data-testid="session-error">
              {error}
            </p>
          )}
        </article>
      )}
      <section>
        <h3>Turns</h3>
        <ErrorNote error={turns.error} />
        {turns.data?.turns.length === 0 && <p class="muted">No turns yet.</p>}
        {turns.data?.turns.map((t) => (
          <article class="turn" data-testid="turn" key={t.task_id}>
            <header>
              <strong>#{t.turn}</strong> <a href={href(`/tasks/${t.task_id}`)}>{t.user_query}</a>{" "}
              <time class="muted">{dateTime(t.timestamp)}</time>
            </header>
            <pre class="result">{t.final_output || "—"}</pre>
            <footer class="facts">
              <span class="fact">{tokens(t.metadata.tokens_used)}</span>
              <span class="fact">{ms(t.metadata.execution_time_ms)}</span>
              <span class="fact">{t.events.length} events</span>
              {t.metadata.agents_involved.length > 0 && (
                <span class="fact">agents: {t.metadata.agents_involved.join(", ")}</span>
              )}
            </footer>
          </article>
        ))}
        {turns.data && s && (
          <Pager
            offset={offset}
            limit={TURNS_PER_PAGE}
            total={s.task_count}
            onPage={(o) => route(href(`/sessions/${id}${o ? `?offset=${o}` : ""}`))}
          />
        )}
      </section>
      {s && (
        <details>
          <summary>Continue this session</summary>
          <SubmitForm
            session={s.external_id || s.session_id}
            onSubmitted={(taskId) => route(href(`/tasks/${taskId}`))}
          />
        </details>
      )}
    </>
  );
}
