// Drop-in for Shannon's Python SDK (Kocoro-lab/Shannon clients/python, AsyncShannonClient over
// HTTP). Python's httpx/websockets are not installable here, so this test replays that client's
// exact requests (paths, query parameters, headers, bodies) and checks every field and status it
// reads from the answers, in the order its methods do. Reference: docs/decisions.md
// "Shannon's Python client".
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import WebSocket from "ws";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

let env: E2eEnvironment;
let root: string;
let key: string;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
  });
  // Its default base_url is the server root ("http://localhost:8080"); it appends /api/v1/… itself.
  root = env.baseUrl.replace(/\/api\/v1$/, "");
  key = (await env.createApiKey({ user: "shannon@example.com", createUser: true })).key;
}, 120_000);
afterAll(async () => {
  await env?.close();
});

/** `_get_headers`: always Content-Type: application/json, then X-API-Key. */
const headers = (extra: Record<string, string> = {}) => ({
  "Content-Type": "application/json",
  "X-API-Key": key,
  ...extra,
});
type J = Record<string, any>;
async function call(method: string, path: string, body?: unknown, extra?: Record<string, string>) {
  const res = await fetch(`${root}${path}`, {
    method,
    headers: headers(extra),
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  const text = await res.text();
  return { status: res.status, headers: res.headers, body: (text ? JSON.parse(text) : undefined) as J };
}
/** Python's datetime.fromisoformat after the client's `Z` → `+00:00` rewrite. */
const pyIso = (s: string) => /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?\+00:00$/.test(s.replace("Z", "+00:00"));

async function waitDone(taskId: string): Promise<J> {
  for (;;) {
    const r = await call("GET", `/api/v1/tasks/${taskId}`);
    // `wait`: status with the prefix stripped must be a TaskStatusEnum name
    const s = String(r.body.status).replace("TASK_STATUS_", "");
    expect(["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"]).toContain(s);
    if (["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"].includes(s)) return r.body;
    await new Promise((r2) => setTimeout(r2, 200));
  }
}

describe("Shannon's Python SDK, replayed", { timeout: 120_000 }, () => {
  it("health at the server root", async () => {
    const health = await fetch(`${root}/health`);
    expect(health.status).toBe(200);
    expect(((await health.json()) as J).status).toBe("healthy");
    // readiness is served there too (200 ready, or 503 naming what is not, under load)
    const ready = await fetch(`${root}/readiness`);
    expect([200, 503]).toContain(ready.status);
    expect(((await ready.json()) as J).status).toMatch(/^(ready|not ready)$/);
  });

  it("submit_task, submit_and_stream, get_status, list_tasks, get_task_events, get_task_timeline, cancel", async () => {
    // submit_task: POST, 200 exactly, task_id; X-Workflow-ID and X-Session-ID headers preferred
    const sub = await call(
      "POST",
      "/api/v1/tasks",
      { query: "Say hello", session_id: "shannon-s1", context: { role: "writer" } },
      { "Idempotency-Key": "shannon-idem-1", traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
    );
    expect(sub.status).toBe(200);
    expect(sub.body.task_id).toEqual(expect.any(String));
    expect(sub.headers.get("X-Workflow-ID")).toBe(sub.body.task_id);
    expect(sub.headers.get("X-Session-ID")).toBeTruthy();
    // submit_and_stream: 200 or 201, stream_url
    const ss = await call("POST", "/api/v1/tasks/stream", { query: "Say hello too" });
    expect([200, 201]).toContain(ss.status);
    expect(ss.body).toMatchObject({
      task_id: expect.any(String),
      stream_url: `/api/v1/stream/sse?workflow_id=${ss.body.task_id}`,
    });

    // get_status: status, response (dict or absent), error
    const detail = await waitDone(sub.body.task_id);
    expect(detail.status).toBe("TASK_STATUS_COMPLETED");
    expect(typeof detail.error).toBe("string");
    if (detail.response !== undefined && detail.response !== null) expect(typeof detail.response).toBe("object");

    // list_tasks: params limit, offset, status, session_id; fields read with [] must exist
    const list = await call("GET", "/api/v1/tasks?limit=20&offset=0&status=COMPLETED&session_id=shannon-s1");
    expect(list.status).toBe(200);
    expect(list.body.total_count).toBe(1);
    for (const t of list.body.tasks as J[]) {
      expect(t).toMatchObject({
        task_id: expect.any(String),
        query: expect.any(String),
        status: expect.any(String),
        mode: expect.any(String),
      });
      expect(pyIso(t.created_at)).toBe(true);
      if (t.completed_at) expect(pyIso(t.completed_at)).toBe(true);
      if (t.total_token_usage)
        expect(Object.keys(t.total_token_usage)).toEqual(
          expect.arrayContaining(["total_tokens", "cost_usd", "prompt_tokens", "completion_tokens"]),
        );
    }

    // get_task_events: data["events"], each with a timestamp it parses (event_data["timestamp"])
    const events = await call("GET", `/api/v1/tasks/${sub.body.task_id}/events`);
    expect(events.status).toBe(200);
    expect((events.body.events as J[]).length).toBeGreaterThan(0);
    for (const e of events.body.events as J[]) {
      expect(pyIso(e.timestamp)).toBe(true);
      expect(e).toMatchObject({
        type: expect.any(String),
        workflow_id: sub.body.task_id,
        message: expect.any(String),
        seq: expect.any(Number),
        stream_id: expect.any(String),
      });
    }
    // get_task_timeline: any JSON, 200
    expect((await call("GET", `/api/v1/tasks/${sub.body.task_id}/timeline`)).status).toBe(200);

    // cancel: json={} (or {"reason"}), 200/202 → data["success"]; a terminal task → 409 → ConnectionError in the client
    // Waiting for an approval, so it is still unfinished when the cancel comes (the offline
    // provider can finish a plain task before it: a 409 in CI).
    const running = await call("POST", "/api/v1/tasks", {
      query: "Research the history of Rome, then compare it with Athens, and summarize both",
      context: { require_approval: true },
    });
    const c = await call("POST", `/api/v1/tasks/${running.body.task_id}/cancel`, { reason: "user asked" });
    expect([200, 202]).toContain(c.status);
    expect(c.body.success).toBe(true);
    expect((await call("POST", `/api/v1/tasks/${sub.body.task_id}/cancel`, {})).status).toBe(409);

    // _handle_http_error: 404 → "task" in the message → TaskNotFoundError
    const nf = await call("GET", "/api/v1/tasks/7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d");
    expect(nf.status).toBe(404);
    expect(String(nf.body.error).toLowerCase()).toContain("task");
    // 401 → AuthenticationError with data["error"]
    const anon = await fetch(`${root}/api/v1/tasks`, { headers: { "Content-Type": "application/json" } });
    expect(anon.status).toBe(401);
    expect(((await anon.json()) as J).error).toBe("Unauthorized");
  });

  it("approve: approval_id, workflow_id, approved, feedback → 200 with success", async () => {
    const sub = await call("POST", "/api/v1/tasks", {
      query: "Summarize the plan",
      context: { require_approval: true },
    });
    let approvalId: string | undefined;
    for (let i = 0; i < 100 && !approvalId; i++) {
      const ev = await call("GET", `/api/v1/tasks/${sub.body.task_id}/events`);
      approvalId = (ev.body.events as J[]).find((e) => e.type === "APPROVAL_REQUESTED")?.data?.approval_id;
      if (!approvalId) await new Promise((r) => setTimeout(r, 200));
    }
    const r = await call("POST", "/api/v1/approvals/decision", {
      approval_id: approvalId,
      workflow_id: sub.body.task_id,
      approved: true,
      feedback: "ok",
    });
    expect(r.status).toBe(200);
    expect(r.body.success).toBe(true);
  });

  it("the six session calls", async () => {
    const sub = await call("POST", "/api/v1/tasks", { query: "Remember blue", session_id: "shannon-s2" });
    await waitDone(sub.body.task_id);
    // list_sessions: session_id, user_id, created_at (fromisoformat), task_count, tokens_used; total_count
    const list = await call("GET", "/api/v1/sessions?limit=20&offset=0");
    expect(list.status).toBe(200);
    expect(list.body.total_count).toBeGreaterThanOrEqual(1);
    for (const s of list.body.sessions as J[]) {
      expect(s).toMatchObject({
        session_id: expect.any(String),
        user_id: expect.any(String),
        task_count: expect.any(Number),
        tokens_used: expect.any(Number),
      });
      expect(pyIso(s.created_at)).toBe(true);
    }
    // get_session: session_id, user_id, created_at (updated_at optional)
    const got = await call("GET", "/api/v1/sessions/shannon-s2");
    expect(got.status).toBe(200);
    expect(got.body).toMatchObject({ session_id: expect.any(String), user_id: expect.any(String) });
    expect(pyIso(got.body.created_at)).toBe(true);
    if (got.body.updated_at) expect(pyIso(got.body.updated_at)).toBe(true);
    // get_session_history: data["tasks"] with task_id, started_at/created_at it parses
    const hist = await call("GET", "/api/v1/sessions/shannon-s2/history");
    expect(hist.status).toBe(200);
    const item = (hist.body.tasks as J[])[0]!;
    expect(item.task_id).toBe(sub.body.task_id);
    expect(pyIso(item.started_at ?? item.created_at)).toBe(true);
    // get_session_events: turns with turn, task_id, user_query, timestamp; events with timestamp; count
    const turns = await call("GET", "/api/v1/sessions/shannon-s2/events?limit=10&offset=0");
    expect(turns.status).toBe(200);
    expect(turns.body.count).toBe(1);
    const turn = (turns.body.turns as J[])[0]!;
    expect(turn).toMatchObject({ turn: expect.any(Number), task_id: sub.body.task_id, user_query: "Remember blue" });
    expect(pyIso(turn.timestamp)).toBe(true);
    for (const e of turn.events as J[]) expect(pyIso(e.timestamp)).toBe(true);
    // update_session_title: PATCH {"title"} → 200 exactly
    expect((await call("PATCH", "/api/v1/sessions/shannon-s2", { title: "Blue" })).status).toBe(200);
    // delete_session: 200 or 204
    expect([200, 204]).toContain((await call("DELETE", "/api/v1/sessions/shannon-s2")).status);
    // then get → 404 whose message names the session → SessionNotFoundError
    const gone = await call("GET", "/api/v1/sessions/shannon-s2");
    expect(gone.status).toBe(404);
    expect(String(gone.body.error).toLowerCase()).toContain("session");
  });

  it("stream (SSE): params workflow_id, types, last_event_id + Last-Event-ID header; id:/data: lines; resumes by stream_id", async () => {
    const sub = await call("POST", "/api/v1/tasks", { query: "Say hello" });
    await waitDone(sub.body.task_id);
    const read = async (lastId?: string) => {
      const q = new URLSearchParams({
        workflow_id: sub.body.task_id,
        types: "LLM_PARTIAL,LLM_OUTPUT,WORKFLOW_COMPLETED",
        ...(lastId ? { last_event_id: lastId } : {}),
      });
      // its SSE request carries only the credential (lower-case x-api-key in one version) and Last-Event-ID
      const res = await fetch(`${root}/api/v1/stream/sse?${q}`, {
        headers: { "x-api-key": key, ...(lastId ? { "Last-Event-ID": lastId } : {}) },
      });
      const text = res.status === 200 ? await res.text() : "";
      const events: J[] = [];
      let data: string[] = [];
      for (const line of text.split("\n")) {
        if (line === "") {
          if (data.length > 0) events.push(JSON.parse(data.join("\n")) as J);
          data = [];
        } else if (line.startsWith("data:")) data.push(line.slice(5).trim());
      }
      return { status: res.status, events };
    };
    const first = await read();
    expect(first.status).toBe(200);
    expect(first.events.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
    for (const e of first.events) {
      expect(e).toMatchObject({
        type: expect.any(String),
        workflow_id: sub.body.task_id,
        message: expect.any(String),
        seq: expect.any(Number),
        stream_id: expect.any(String),
      });
      expect(pyIso(e.timestamp)).toBe(true);
    }
    // resuming from a mid-stream stream_id continues after it
    const mid = first.events[Math.floor(first.events.length / 2)]!;
    const rest = await read(mid.stream_id);
    expect(rest.events.map((e) => e.seq)).toEqual(first.events.filter((e) => e.seq > mid.seq).map((e) => e.seq));
    // resuming at the end: 204 (its loop sees "not 200" and stops with ConnectionError only after retries; the
    // stream is over)
    expect((await read(first.events.at(-1)!.stream_id)).status).toBe(204);
  });

  it("WebSocket: every server message is an event or pong (no subscribed/done/error messages)", async () => {
    const sub = await call("POST", "/api/v1/tasks", { query: "Say hello" });
    const ws = new WebSocket(`${root.replace(/^http/, "ws")}/api/v1/stream/ws?workflow_id=${sub.body.task_id}`, {
      headers: { "X-API-Key": key },
    });
    const messages: J[] = [];
    // Both must come: the pong and the terminal event, in either order (a task that finished
    // before the socket opened is replayed at once, possibly ahead of the pong).
    await new Promise<void>((resolve, reject) => {
      ws.on("message", (d) => {
        const m = JSON.parse(String(d)) as J;
        messages.push(m);
        const types = messages.map((x) => x.type);
        if (types.includes("WORKFLOW_COMPLETED") && types.includes("pong")) resolve();
      });
      ws.on("error", reject);
      ws.on("open", () => ws.send(JSON.stringify({ type: "ping" })));
    });
    ws.close();
    expect(messages.filter((m) => typeof m.seq !== "number").map((m) => m.type)).toEqual(["pong"]);

    // A refused message is told by the close frame (code 4000 + HTTP status, reason), never by
    // an error message a client would parse as an event.
    const other = new WebSocket(`${root.replace(/^http/, "ws")}/api/v1/stream/ws`, { headers: { "X-API-Key": key } });
    const received: string[] = [];
    other.on("message", (d) => received.push(String(d)));
    await new Promise((r) => other.once("open", r));
    other.send(JSON.stringify({ type: "subscribe", workflow_id: "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d" }));
    const [code, reason] = await new Promise<[number, string]>((r) =>
      other.once("close", (c, why) => r([c, String(why)])),
    );
    expect({ code, reason, received }).toEqual({
      code: 4404,
      reason: "Task not found (workflow_id 7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d)",
      received: [],
    });
  });
});
