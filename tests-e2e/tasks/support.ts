import { expect } from "vitest";
import { request, type E2eEnvironment, type JsonResponse } from "@tog/tests-e2e";

// Task helpers over the public API (through the router), as a client would use it.

export type Json = Record<string, any>;

export interface Client {
  baseUrl: string;
  key: string;
}

/** A client of a new user `<name>@example.com` with an API key, through the environment's public port. */
export async function newClient(env: E2eEnvironment, name: string): Promise<Client> {
  const { key } = await env.createApiKey({ user: `${name}@example.com`, createUser: true, name });
  return { baseUrl: env.baseUrl, key };
}

export function headers(c: Client, extra: Record<string, string> = {}): Record<string, string> {
  return { "X-API-Key": c.key, "Content-Type": "application/json", ...extra };
}

export function submit(c: Client, body: Json, extra: Record<string, string> = {}): Promise<JsonResponse<Json>> {
  return request<Json>(`${c.baseUrl}/tasks`, {
    method: "POST",
    headers: headers(c, extra),
    body: JSON.stringify(body),
  });
}

export function get(c: Client, path: string): Promise<JsonResponse<Json>> {
  return request<Json>(`${c.baseUrl}${path}`, { headers: { "X-API-Key": c.key } });
}

export function post(c: Client, path: string, body?: Json): Promise<JsonResponse<Json>> {
  return request<Json>(`${c.baseUrl}${path}`, {
    method: "POST",
    headers: body === undefined ? { "X-API-Key": c.key } : headers(c),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

const TERMINAL = new Set([
  "TASK_STATUS_COMPLETED",
  "TASK_STATUS_FAILED",
  "TASK_STATUS_CANCELLED",
  "TASK_STATUS_TIMEOUT",
]);

export async function waitForStatus(
  c: Client,
  taskId: string,
  statuses: string[] = [...TERMINAL],
  timeoutMs = 30_000,
): Promise<Json> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await get(c, `/tasks/${taskId}`);
    expect(res.status).toBe(200);
    if (statuses.includes(res.body.status)) return res.body;
    if (Date.now() > end) throw new Error(`task ${taskId} is ${res.body.status}, expected ${statuses.join("|")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Every persisted event of a task, paging through the history (waits for the terminal one). */
export async function allEvents(c: Client, taskId: string, timeoutMs = 15_000): Promise<Json[]> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const events: Json[] = [];
    for (let offset = 0; ; offset += 200) {
      const res = await get(c, `/tasks/${taskId}/events?limit=200&offset=${offset}`);
      expect(res.status).toBe(200);
      events.push(...(res.body.events as Json[]));
      if ((res.body.events as Json[]).length < 200) break;
    }
    const last = events.at(-1);
    if (
      last &&
      (last.type === "WORKFLOW_COMPLETED" || (last.type === "ERROR_OCCURRED" && last.data?.terminal === true))
    )
      return events;
    if (Date.now() > end)
      throw new Error(`events of ${taskId} have no terminal event: ${events.map((e) => e.type).join(",")}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** Waits until the task's persisted history holds an event of `type`. */
export async function waitForEvent(c: Client, taskId: string, type: string, timeoutMs = 15_000): Promise<Json> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const res = await get(c, `/tasks/${taskId}/events?limit=200`);
    const found = (res.body.events as Json[] | undefined)?.find((e) => e.type === type);
    if (found) return found;
    if (Date.now() > end) throw new Error(`no ${type} event for ${taskId}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** seq 1..n without gaps or repeats, exactly one terminal event and it is the last. */
export function expectWellFormed(events: Json[]): void {
  expect(events.map((e) => e.seq)).toEqual(events.map((_, i) => i + 1));
  const terminal = events.filter(
    (e) => e.type === "WORKFLOW_COMPLETED" || (e.type === "ERROR_OCCURRED" && e.data?.terminal === true),
  );
  expect(terminal).toHaveLength(1);
  expect(terminal[0]).toBe(events.at(-1));
  const traceIds = new Set(events.map((e) => e.trace_id));
  expect(traceIds.size).toBe(1);
  for (const e of events) expect(e.stream_id).toBe(`${Date.parse(e.timestamp)}-${e.seq}`);
}
