import { request, type JsonResponse } from "@tog/tests-e2e";

// Authenticated routes the foundation tests exercise. `POST /auth/token` (X-API-Key only, rate
// limited, idempotent) exists now; the task routes arrive with the next issue. Each test asks
// the running gateway (its OpenAPI document) which exist and skips, with a note, those that do
// not yet; they then run unchanged once the route is there.

export interface ProtectedCall {
  /** "METHOD /api/v1/…" as listed in openapi.json. */
  op: string;
  method: "GET" | "POST";
  /** Relative to baseUrl. */
  path: string;
  /** JSON body for POST. */
  body?: unknown;
  /** Status of a successful call. */
  ok: number;
}

export const ISSUE_TOKEN: ProtectedCall = { op: "POST /api/v1/auth/token", method: "POST", path: "/auth/token", body: {}, ok: 201 };
export const LIST_TASKS: ProtectedCall = { op: "GET /api/v1/tasks", method: "GET", path: "/tasks", ok: 200 };
export const SUBMIT_TASK = "POST /api/v1/tasks";

export const PROTECTED_CALLS: readonly ProtectedCall[] = [ISSUE_TOKEN, LIST_TASKS];

export function missingRouteNote(op: string): string {
  return `${op} does not exist yet (task routes arrive with the next issue); this test runs once it does`;
}

/** Calls a protected route with the given headers (and the call's body); `query` is appended to the path. */
export function call<T = unknown>(
  baseUrl: string,
  c: ProtectedCall,
  headers: Record<string, string> = {},
  query = "",
): Promise<JsonResponse<T>> {
  const init: RequestInit = { method: c.method, headers: { ...headers } };
  if (c.body !== undefined) {
    init.body = JSON.stringify(c.body);
    (init.headers as Record<string, string>)["Content-Type"] = "application/json";
  }
  return request<T>(`${baseUrl}${c.path}${query}`, init);
}
