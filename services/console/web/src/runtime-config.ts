// Settings the console service gives the page at run time (`/console/config.json`).

export interface RuntimeConfig {
  apiBaseUrl: string;
}

export async function loadRuntimeConfig(): Promise<RuntimeConfig> {
  const res = await fetch(`${import.meta.env.BASE_URL}config.json`, { cache: "no-store" });
  if (!res.ok) throw new Error(`config.json: HTTP ${res.status}`);
  const body = (await res.json()) as { api_base_url?: string };
  return { apiBaseUrl: body.api_base_url ?? "/api/v1" };
}
