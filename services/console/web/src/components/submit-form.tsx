import { useState } from "preact/hooks";
import { MODES, type SubmitInput } from "../api.ts";
import { useClient } from "../client-context.ts";

/** Submit a task: query, mode (automatic unless chosen), session, context as a JSON object. */
export function SubmitForm({ onSubmitted, session }: { onSubmitted(taskId: string): void; session?: string }) {
  const client = useClient();
  const [query, setQuery] = useState("");
  const [mode, setMode] = useState("");
  const [sessionId, setSessionId] = useState(session ?? "");
  const [context, setContext] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setError(null);
    if (query.trim() === "") {
      setError("Write a query first.");
      return;
    }
    const input: SubmitInput = { query: query.trim() };
    if (mode) input.mode = mode;
    if (sessionId.trim()) input.session_id = sessionId.trim();
    if (context.trim()) {
      let parsed: unknown;
      try {
        parsed = JSON.parse(context);
      } catch {
        setError('Context must be a JSON object, e.g. {"role": "analyst"}.');
        return;
      }
      if (parsed === null || typeof parsed !== "object" || Array.isArray(parsed)) {
        setError('Context must be a JSON object, e.g. {"role": "analyst"}.');
        return;
      }
      input.context = parsed as Record<string, unknown>;
    }
    setBusy(true);
    try {
      const { task_id } = await client.submitTask(input);
      onSubmitted(task_id);
    } catch (err) {
      setError((err as Error).message);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form onSubmit={submit} data-testid="submit-form">
      <label>
        Query
        <textarea
          name="query"
          rows={3}
          placeholder="What should the agents do?"
          value={query}
          onInput={(e) => setQuery((e.target as HTMLTextAreaElement).value)}
          data-testid="submit-query"
        />
      </label>
      <div class="grid">
        <label>
          Mode
          <select
            name="mode"
            value={mode}
            onChange={(e) => setMode((e.target as HTMLSelectElement).value)}
            data-testid="submit-mode"
          >
            <option value="">automatic</option>
            {MODES.map((m) => (
              <option value={m}>{m}</option>
            ))}
          </select>
        </label>
        <label>
          Session
          <input
            name="session"
            placeholder="new session"
            value={sessionId}
            onInput={(e) => setSessionId((e.target as HTMLInputElement).value)}
            data-testid="submit-session"
          />
        </label>
      </div>
      <label>
        Context (JSON object, optional)
        <textarea
          name="context"
          rows={2}
          placeholder='{"role": "analyst"}'
          value={context}
          onInput={(e) => setContext((e.target as HTMLTextAreaElement).value)}
          data-testid="submit-context"
        />
      </label>
      {error && (
        <p role="alert" class="error" data-testid="submit-error">
          {error}
        </p>
      )}
      <button type="submit" aria-busy={busy} disabled={busy} data-testid="submit">
        Submit task
      </button>
    </form>
  );
}
