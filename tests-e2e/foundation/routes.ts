import { request, type JsonResponse } from "@tog/tests-e2e";

// Authenticated routes the foundation tests exercise: `POST /auth/token` (X-API-Key only, rate
// limited, idempotent) and the task routes. Each test first checks the running gateway lists
// the route in its OpenAPI document, so a route that disappears fails loudly.

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

export const ISSUE_TOKEN: ProtectedCall = {
  op: "POST /api/v1/auth/token",
  method: "POST",
  path: "/auth/token",
  body: {},
  ok: 201,
};
export const LIST_TASKS: ProtectedCall = { op: "GET /api/v1/tasks", method: "GET", path: "/tasks", ok: 200 };
export const SUBMIT_TASK = "POST /api/v1/tasks";

export const PROTECTED_CALLS: readonly ProtectedCall[] = [ISSUE_TOKEN, LIST_TASKS];

export function missingRouteNote(op: string): string {
  return `${op} is missing from the gateway's OpenAPI document`;
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
