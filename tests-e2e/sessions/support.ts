import { request, type JsonResponse } from "@tog/tests-e2e";
import { get, submit, waitForStatus, type Client, type Json } from "../tasks/support.ts";

// Session helpers over the public API (through the router), as a client would use them.

export function patchTitle(c: Client, ref: string, title: unknown): Promise<JsonResponse<Json>> {
  return request<Json>(`${c.baseUrl}/sessions/${encodeURIComponent(ref)}`, {
    method: "PATCH",
    headers: { "X-API-Key": c.key, "Content-Type": "application/json" },
    body: JSON.stringify({ title }),
  });
}

export function deleteSession(c: Client, ref: string): Promise<JsonResponse<Json>> {
  return request<Json>(`${c.baseUrl}/sessions/${encodeURIComponent(ref)}`, {
    method: "DELETE",
    headers: { "X-API-Key": c.key },
  });
}

export function session(c: Client, ref: string, suffix = ""): Promise<JsonResponse<Json>> {
  return get(c, `/sessions/${encodeURIComponent(ref)}${suffix}`);
}

/** Submits a task and waits for its terminal state; returns the task detail and the session headers. */
export async function turn(c: Client, body: Json): Promise<{ task: Json; sessionRef: string }> {
  const res = await submit(c, body);
  if (res.status !== 200) throw new Error(`submit answered ${res.status}: ${res.text}`);
  const task = await waitForStatus(c, res.body.task_id as string);
  return { task, sessionRef: res.headers.get("x-session-id")! };
}

/**
 * The sanitized prompt of a task's first model call. Read again for a few seconds if it is not
 * there yet: a read right after the final status waits at most 1 s for the permanent log
 * (docs/decisions.md "Event history after the final status"), and a CI machine running every
 * test file at once can hold the event persister back longer than that.
 */
export async function firstPrompt(c: Client, taskId: string): Promise<string> {
  const findPrompt = (res: JsonResponse<Json>) => (res.body.events as Json[]).find((e) => e.type === "LLM_PROMPT");
  const res = await eventually(
    () => get(c, `/tasks/${taskId}/events?limit=200`),
    (r) => findPrompt(r) !== undefined,
    10_000,
  );
  const prompt = findPrompt(res);
  if (!prompt) throw new Error(`no LLM_PROMPT for ${taskId}`);
  return prompt.data.sanitized_prompt as string;
}

export async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 5_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 25));
  }
}
