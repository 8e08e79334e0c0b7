import { useState } from "preact/hooks";
import { ApiClient, ApiError } from "../api.ts";

export function SignIn({ apiBaseUrl, onSignedIn }: { apiBaseUrl: string; onSignedIn(key: string): void }) {
  const [key, setKey] = useState("");
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  const submit = async (e: Event) => {
    e.preventDefault();
    setBusy(true);
    setError(null);
    const trimmed = key.trim();
    try {
      await new ApiClient({ baseUrl: apiBaseUrl, apiKey: trimmed }).verify();
      onSignedIn(trimmed);
    } catch (err) {
      setError(
        err instanceof ApiError && err.status === 401
          ? "The API key was not accepted (Unauthorized)."
          : `Sign-in failed: ${(err as Error).message}`,
      );
    } finally {
      setBusy(false);
    }
  };

  return (
    <article class="sign-in">
      <header>
        <h1>Task Orchestration Gateway</h1>
        <p>
          Sign in with an API key (<code>sk_…</code>, from <code>npm run keys -- create</code>).
        </p>
      </header>
      {/* method=post: a form submitted before the script runs never puts the key in the URL. */}
      <form method="post" action="#" onSubmit={submit} data-testid="sign-in-form">
        <label>
          API key
          <input
            type="password"
            name="api-key"
            autocomplete="off"
            placeholder="sk_…"
            value={key}
            onInput={(e) => setKey((e.target as HTMLInputElement).value)}
            data-testid="api-key"
            aria-invalid={error ? "true" : undefined}
          />
          <small>
            Kept in this tab's session storage only and sent as the X-API-Key header. Leave empty when the server runs
            without authentication.
          </small>
        </label>
        {error && (
          <p role="alert" class="error" data-testid="sign-in-error">
            {error}
          </p>
        )}
        <button type="submit" aria-busy={busy} disabled={busy} data-testid="sign-in">
          Sign in
        </button>
      </form>
    </article>
  );
}
