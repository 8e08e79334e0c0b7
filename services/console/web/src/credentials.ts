// The API key lives in this tab's session storage only: gone when the tab closes, never in
// local storage, cookies or a URL.

const KEY = "tog.console.apiKey";

export function loadApiKey(): string | null {
  return sessionStorage.getItem(KEY);
}

export function saveApiKey(key: string): void {
  sessionStorage.setItem(KEY, key);
}

export function clearApiKey(): void {
  sessionStorage.removeItem(KEY);
}
