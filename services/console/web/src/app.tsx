import { useMemo, useState } from "preact/hooks";
import { LocationProvider, Route, Router } from "preact-iso";
import { ApiClient } from "./api.ts";
import { ClientContext, href } from "./client-context.ts";
import { clearApiKey, loadApiKey, saveApiKey } from "./credentials.ts";
import type { RuntimeConfig } from "./runtime-config.ts";
import { SignIn } from "./pages/sign-in.tsx";
import { TasksPage } from "./pages/tasks.tsx";
import { TaskPage } from "./pages/task.tsx";
import { SessionsPage } from "./pages/sessions.tsx";
import { SessionPage } from "./pages/session.tsx";
import { NotFound } from "./pages/not-found.tsx";

export function App({ config }: { config: RuntimeConfig }) {
  const [apiKey, setApiKey] = useState<string | null>(() => loadApiKey());
  const client = useMemo(
    () => (apiKey === null ? null : new ApiClient({ baseUrl: config.apiBaseUrl, apiKey })),
    [apiKey, config.apiBaseUrl],
  );

  if (client === null) {
    return (
      <main class="container">
        <SignIn
          apiBaseUrl={config.apiBaseUrl}
          onSignedIn={(key) => {
            saveApiKey(key);
            setApiKey(key);
          }}
        />
      </main>
    );
  }

  const signOut = () => {
    clearApiKey();
    setApiKey(null);
  };
  return (
    <ClientContext.Provider value={client}>
      <LocationProvider scope={href("")}>
        <header class="container">
          <nav>
            <ul>
              <li>
                <strong>TOG Console</strong>
              </li>
            </ul>
            <ul>
              <li>
                <a href={href("/")} data-testid="nav-tasks">
                  Tasks
                </a>
              </li>
              <li>
                <a href={href("/sessions")} data-testid="nav-sessions">
                  Sessions
                </a>
              </li>
              <li>
                <button class="secondary outline small" type="button" onClick={signOut} data-testid="sign-out">
                  Sign out
                </button>
              </li>
            </ul>
          </nav>
        </header>
        <main class="container">
          <Router>
            <Route path={href("/")} component={TasksPage} />
            <Route path={href("/tasks/:id")} component={TaskPage} />
            <Route path={href("/sessions")} component={SessionsPage} />
            <Route path={href("/sessions/:id")} component={SessionPage} />
            <Route default component={NotFound} />
          </Router>
        </main>
      </LocationProvider>
    </ClientContext.Provider>
  );
}
