import { beforeAll, describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import type { TaskDetail } from "@tog/proto";
import { call, useTaskApp, TEST_RPM, type TaskApp, type TestUser } from "./support/task-app.ts";

let app: TaskApp;
let alice: TestUser;
let bob: TestUser;

useTaskApp((...fixture) => ([app, alice, bob] = fixture));

const get = (path: string, key = alice.key) => call(app.base, "GET", path, { key });

const USAGE = { inputTokens: 120, outputTokens: 30, totalTokens: 150, costUsd: 0.00042 };

function completed(overrides: Partial<TaskDetail> = {}): TaskDetail {
  return app.orchestrator.seed({
    userId: alice.id,
    query: "What is 2+2?",
    status: "COMPLETED",
    mode: "EXECUTION_MODE_SIMPLE",
    requestedMode: "simple",
    result: "4",
    modelUsed: "gpt-5-nano",
    provider: "openai",
    usage: USAGE,
    startedAt: "2026-01-01T00:10:01.000Z",
    completedAt: "2026-01-01T00:10:05.000Z",
    updatedAt: "2026-01-01T00:10:05.000Z",
    ...overrides,
  });
}

describe("GET /api/v1/tasks/{id}", () => {
  it("renders a completed task per 2.3 with X-Workflow-ID", async () => {
    const task = completed({ result: '{"answer": 4, "steps": ["add"]}' });
    const res = await get(`/api/v1/tasks/${task.taskId}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-workflow-id")).toBe(task.taskId);
    expect(res.body).toEqual({
      task_id: task.taskId,
      status: "TASK_STATUS_COMPLETED",
      result: '{"answer": 4, "steps": ["add"]}',
      response: { answer: 4, steps: ["add"] },
      error: "",
      created_at: task.createdAt,
      updated_at: "2026-01-01T00:10:05.000Z",
      query: "What is 2+2?",
      session_id: task.sessionId,
      mode: "EXECUTION_MODE_SIMPLE",
      model_used: "gpt-5-nano",
      provider: "openai",
      usage: { total_tokens: 150, input_tokens: 120, output_tokens: 30, estimated_cost: 0.00042 },
    });
    expect(app.orchestrator.calls.getTask).toEqual([{ userId: alice.id, taskId: task.taskId }]);
  });

  it("includes `response` only for a JSON object or array result", async () => {
    const cases: [string, unknown][] = [
      ["[1, 2]", [1, 2]],
      ['  {"a":1}', { a: 1 }],
      ["plain text", undefined],
      ['"a json string"', undefined],
      ["42", undefined],
      ["{not json", undefined],
      ["", undefined],
    ];
    for (const [result, response] of cases) {
      const task = completed({ result });
      const res = await get(`/api/v1/tasks/${task.taskId}`);
      expect(res.body.result).toBe(result);
      if (response === undefined) expect(res.body).not.toHaveProperty("response");
      else expect(res.body.response).toEqual(response);
    }
  });

  it("omits result, response, model_used, provider and usage before completion and on failure", async () => {
    const queued = app.orchestrator.seed({ userId: alice.id, query: "later" });
    const res = await get(`/api/v1/tasks/${queued.taskId}`);
    expect(res.body).toEqual({
      task_id: queued.taskId,
      status: "TASK_STATUS_QUEUED",
      error: "",
      created_at: queued.createdAt,
      updated_at: queued.updatedAt,
      query: "later",
      session_id: queued.sessionId,
      mode: "EXECUTION_MODE_STANDARD",
    });

    const failed = app.orchestrator.seed({
      userId: alice.id,
      status: "FAILED",
      mode: "EXECUTION_MODE_STANDARD",
      result: "partial",
      error: "LLM provider unavailable",
      modelUsed: "m",
      provider: "p",
      usage: USAGE,
      completedAt: "2026-01-01T01:00:00.000Z",
    });
    const f = await get(`/api/v1/tasks/${failed.taskId}`);
    expect(f.body.status).toBe("TASK_STATUS_FAILED");
    expect(f.body.error).toBe("LLM provider unavailable");
    for (const field of ["result", "response", "model_used", "provider", "usage"])
      expect(f.body).not.toHaveProperty(field);
  });

  it("renders every status with the TASK_STATUS_ prefix", async () => {
    for (const status of ["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"] as const) {
      const t = app.orchestrator.seed({ userId: alice.id, status });
      expect((await get(`/api/v1/tasks/${t.taskId}`)).body.status).toBe(`TASK_STATUS_${status}`);
    }
  });

  it("shows the requested mode before the run chose one; supervisor reads as COMPLEX", async () => {
    const cases: [TaskDetail["requestedMode"], TaskDetail["mode"], string][] = [
      [null, null, "EXECUTION_MODE_STANDARD"],
      ["simple", null, "EXECUTION_MODE_SIMPLE"],
      ["standard", null, "EXECUTION_MODE_STANDARD"],
      ["complex", null, "EXECUTION_MODE_COMPLEX"],
      ["supervisor", null, "EXECUTION_MODE_COMPLEX"],
      [null, "EXECUTION_MODE_SIMPLE", "EXECUTION_MODE_SIMPLE"],
      ["complex", "EXECUTION_MODE_COMPLEX", "EXECUTION_MODE_COMPLEX"],
    ];
    for (const [requestedMode, mode, shown] of cases) {
      const t = app.orchestrator.seed({ userId: alice.id, requestedMode, mode });
      expect((await get(`/api/v1/tasks/${t.taskId}`)).body.mode).toBe(shown);
    }
  });

  it("answers 404 `Task not found` for unknown, malformed and another user's ids", async () => {
    const task = completed();
    for (const [path, key] of [
      [`/api/v1/tasks/${randomUUID()}`, alice.key],
      [`/api/v1/tasks/${task.taskId}`, bob.key],
      ["/api/v1/tasks/not-a-uuid", alice.key],
      ["/api/v1/tasks/task-123-456", alice.key],
    ] as const) {
      const res = await get(path, key);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Task not found" });
    }
    // Malformed ids never reach the orchestrator.
    expect(app.orchestrator.calls.getTask).toHaveLength(2);
  });

  it("accepts an upper-case UUID (ids are looked up lower-case)", async () => {
    const task = completed();
    const res = await get(`/api/v1/tasks/${task.taskId.toUpperCase()}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("x-workflow-id")).toBe(task.taskId);
  });

  it("an unexpected failure is a 500 `Failed to get task status: internal error`", async () => {
    app.orchestrator.failNext = new Error("boom");
    const res = await get(`/api/v1/tasks/${randomUUID()}`);
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: "Failed to get task status: internal error" });
  });

  it("needs a credential", async () => {
    const res = await call(app.base, "GET", `/api/v1/tasks/${randomUUID()}`);
    expect(res.status).toBe(401);
  });
});

describe("GET /api/v1/tasks", () => {
  let lister: TestUser;
  let tasks: TaskDetail[];

  beforeAll(async () => {
    lister = await app.newUser("lister");
    const session = randomUUID();
    app.orchestrator.sessions.set("lister-chat", { id: session, userId: lister.id });
    tasks = [
      app.orchestrator.seed({
        userId: lister.id,
        query: "q1",
        status: "COMPLETED",
        mode: "EXECUTION_MODE_SIMPLE",
        usage: USAGE,
        completedAt: "2026-01-02T00:00:00.000Z",
        sessionId: session,
      }),
      app.orchestrator.seed({ userId: lister.id, query: "q2", status: "RUNNING", requestedMode: "complex" }),
      app.orchestrator.seed({
        userId: lister.id,
        query: "q3",
        status: "CANCELLED",
        completedAt: "2026-01-03T00:00:00.000Z",
        sessionId: session,
      }),
      app.orchestrator.seed({
        userId: lister.id,
        query: "q4",
        status: "FAILED",
        usage: USAGE,
        completedAt: "2026-01-04T00:00:00.000Z",
      }),
      app.orchestrator.seed({ userId: lister.id, query: "q5", status: "QUEUED" }),
    ];
  });

  const list = (qs = "", key = lister.key) => get(`/api/v1/tasks${qs}`, key);

  it("lists newest first with 2.4 items, total_count and defaults limit 20 / offset 0", async () => {
    const res = await list();
    expect(res.status).toBe(200);
    expect(app.orchestrator.calls.listTasks).toEqual([
      { userId: lister.id, limit: 20, offset: 0, status: undefined, sessionId: undefined },
    ]);
    expect(res.body.total_count).toBe(5);
    expect(res.body.tasks.map((t: { query: string }) => t.query)).toEqual(["q5", "q4", "q3", "q2", "q1"]);
    const byQuery = Object.fromEntries(res.body.tasks.map((t: { query: string }) => [t.query, t]));
    expect(byQuery.q1).toEqual({
      task_id: tasks[0]!.taskId,
      query: "q1",
      status: "TASK_STATUS_COMPLETED",
      mode: "EXECUTION_MODE_SIMPLE",
      created_at: tasks[0]!.createdAt,
      completed_at: "2026-01-02T00:00:00.000Z",
      total_token_usage: { total_tokens: 150, cost_usd: 0.00042, prompt_tokens: 120, completion_tokens: 30 },
    });
    expect(byQuery.q2).toMatchObject({
      status: "TASK_STATUS_RUNNING",
      mode: "EXECUTION_MODE_COMPLEX",
      completed_at: null,
      total_token_usage: null,
    });
    expect(byQuery.q3).toMatchObject({
      status: "TASK_STATUS_CANCELLED",
      completed_at: "2026-01-03T00:00:00.000Z",
      total_token_usage: null,
    });
    expect(byQuery.q4).toMatchObject({ status: "TASK_STATUS_FAILED", total_token_usage: { total_tokens: 150 } });
    expect(byQuery.q5).toMatchObject({
      status: "TASK_STATUS_QUEUED",
      mode: "EXECUTION_MODE_STANDARD",
      completed_at: null,
    });
  });

  it("pages with limit and offset", async () => {
    const res = await list("?limit=2&offset=1");
    expect(res.body.tasks.map((t: { query: string }) => t.query)).toEqual(["q4", "q3"]);
    expect(res.body.total_count).toBe(5);
    expect((await list("?limit=100&offset=0")).status).toBe(200);
    expect((await list("?limit=1")).body.tasks).toHaveLength(1);
    expect((await list("?limit=&offset=")).status).toBe(200);
    expect(app.orchestrator.calls.listTasks.at(-1)).toMatchObject({ limit: 20, offset: 0 });
  });

  it("refuses out-of-range or non-integer paging with a message naming the parameter and range", async () => {
    const limit = "Invalid limit parameter: must be an integer from 1 to 100";
    const offset = "Invalid offset parameter: must be an integer from 0 to 2147483647";
    for (const [qs, error] of [
      ["?limit=0", limit],
      ["?limit=101", limit],
      ["?limit=abc", limit],
      ["?limit=1.5", limit],
      ["?limit=-1", limit],
      ["?limit=+5", limit],
      ["?limit=1e1", limit],
      ["?limit=5&limit=6", limit],
      ["?offset=-1", offset],
      ["?offset=x", offset],
      ["?offset=2147483648", offset],
      ["?offset=99999999999999999999", offset],
    ] as const) {
      const res = await list(qs);
      expect({ qs, status: res.status, body: res.body }).toEqual({ qs, status: 400, body: { error } });
    }
    expect(app.orchestrator.calls.listTasks).toHaveLength(0);
  });

  it("filters by bare status, case-insensitively; CANCELED = CANCELLED; the prefixed form works too", async () => {
    const cases: [string, string][] = [
      ["COMPLETED", "COMPLETED"],
      ["completed", "COMPLETED"],
      ["Running", "RUNNING"],
      ["CANCELED", "CANCELLED"],
      ["cancelled", "CANCELLED"],
      ["TASK_STATUS_FAILED", "FAILED"],
      ["TIMEOUT", "TIMEOUT"],
      ["QUEUED", "QUEUED"],
    ];
    for (const [value, status] of cases) {
      const res = await list(`?status=${value}`);
      expect(res.status).toBe(200);
      expect(app.orchestrator.calls.listTasks.at(-1)!.status).toBe(status);
      for (const t of res.body.tasks) expect(t.status).toBe(`TASK_STATUS_${status}`);
    }
    const cancelled = await list("?status=canceled");
    expect(cancelled.body.tasks.map((t: { query: string }) => t.query)).toEqual(["q3"]);
    expect(cancelled.body.total_count).toBe(1);
    await list("?status=");
    expect(app.orchestrator.calls.listTasks.at(-1)!.status).toBeUndefined();
  });

  it("refuses an unknown status naming the allowed values", async () => {
    const res = await list("?status=DONE");
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error:
        'Invalid status parameter: "DONE" (allowed: QUEUED, RUNNING, COMPLETED, FAILED, CANCELLED, TIMEOUT, CANCELED)',
    });
  });

  it("passes session_id through (either form)", async () => {
    const res = await list("?session_id=lister-chat");
    expect(app.orchestrator.calls.listTasks.at(-1)!.sessionId).toBe("lister-chat");
    expect(res.body.tasks.map((t: { query: string }) => t.query)).toEqual(["q3", "q1"]);
    const long = await list(`?session_id=${"s".repeat(256)}`);
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ error: "Invalid session_id parameter: at most 255 characters" });
  });

  it("an unexpected failure is a 500 `Failed to list tasks: internal error`", async () => {
    app.orchestrator.failNext = new Error("boom");
    const res = await list();
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: "Failed to list tasks: internal error" });
  });

  it("shows only the caller's tasks", async () => {
    const res = await list("", bob.key);
    expect(res.body.tasks.every((t: { query: string }) => !t.query.startsWith("q"))).toBe(true);
  });

  it("has its own 100/min bucket: exhausting it leaves other routes alone", async () => {
    const poller = await app.newUser("poller");
    const first = await list("?limit=1", poller.key);
    expect(first.headers.get("x-ratelimit-limit")).toBe("100");
    expect(first.headers.get("x-ratelimit-remaining")).toBe("99");
    await Promise.all(Array.from({ length: 99 }, () => list("?limit=1", poller.key)));
    const limited = await list("?limit=1", poller.key);
    expect(limited.status).toBe(429);
    expect(limited.body).toEqual({ error: "Rate limit exceeded", retry_after: expect.any(Number) });
    expect(limited.headers.get("retry-after")).not.toBeNull();

    const other = await get(`/api/v1/tasks/${randomUUID()}`, poller.key);
    expect(other.status).toBe(404);
    expect(other.headers.get("x-ratelimit-limit")).toBe(String(TEST_RPM));
  });
});

describe("GET /api/v1/tasks/{id}/events", () => {
  // Stored text with its own spacing, to prove the events are written out untouched.
  const stored = (id: string, seq: number, type = "PROGRESS") =>
    `{"workflow_id":"${id}","type":"${type}","agent_id":"orchestrator","message":"step ${seq} \\u00e9 \\"q\\"","timestamp":"2026-01-01T00:00:0${seq % 10}.000Z","seq":${seq},"stream_id":"1767225600000-${seq}","trace_id":"${"a".repeat(32)}","data":{"seq":${1000 + seq},  "nested": {"k": [1, 2]}}}`;

  let task: TaskDetail;
  let events: string[];

  beforeAll(() => {
    task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    events = Array.from({ length: 7 }, (_, i) => stored(task.taskId, i + 1));
    app.orchestrator.events.set(task.taskId, events);
  });

  it("writes the stored events verbatim with count, total_count and next_after_seq (defaults 50/0)", async () => {
    const res = await get(`/api/v1/tasks/${task.taskId}/events`);
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.text).toBe(
      `{"workflow_id":"${task.taskId}","events":[${events.join(",")}],"count":7,"total_count":7,"next_after_seq":7}`,
    );
    expect(res.body.events[0].message).toBe('step 1 é "q"');
    expect(app.orchestrator.calls.getTaskEvents).toEqual([
      { userId: alice.id, taskId: task.taskId, limit: 50, offset: 0, afterSeq: undefined },
    ]);
  });

  it("pages by offset and by the after_seq cursor", async () => {
    const page = await get(`/api/v1/tasks/${task.taskId}/events?limit=3&offset=2`);
    expect(page.body).toMatchObject({ count: 3, total_count: 7, next_after_seq: 5 });
    expect(page.body.events.map((e: { seq: number }) => e.seq)).toEqual([3, 4, 5]);

    const next = await get(`/api/v1/tasks/${task.taskId}/events?limit=3&after_seq=${page.body.next_after_seq}`);
    expect(next.body.events.map((e: { seq: number }) => e.seq)).toEqual([6, 7]);
    expect(next.body).toMatchObject({ count: 2, next_after_seq: 7 });
    expect(app.orchestrator.calls.getTaskEvents.at(-1)).toMatchObject({ afterSeq: 5, limit: 3, offset: 0 });

    const empty = await get(`/api/v1/tasks/${task.taskId}/events?after_seq=7`);
    expect(empty.text).toBe(
      `{"workflow_id":"${task.taskId}","events":[],"count":0,"total_count":7,"next_after_seq":null}`,
    );
  });

  it("refuses bad paging parameters", async () => {
    for (const [qs, error] of [
      ["limit=0", "Invalid limit parameter: must be an integer from 1 to 200"],
      ["limit=201", "Invalid limit parameter: must be an integer from 1 to 200"],
      ["offset=-3", "Invalid offset parameter: must be an integer from 0 to 2147483647"],
      ["after_seq=x", "Invalid after_seq parameter: must be an integer from 0 to 9007199254740991"],
    ] as const) {
      const res = await get(`/api/v1/tasks/${task.taskId}/events?${qs}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
    expect((await get(`/api/v1/tasks/${task.taskId}/events?limit=200`)).status).toBe(200);
  });

  it("answers 404 for another user's, unknown or malformed ids", async () => {
    for (const [path, key] of [
      [`/api/v1/tasks/${task.taskId}/events`, bob.key],
      [`/api/v1/tasks/${randomUUID()}/events`, alice.key],
      ["/api/v1/tasks/nope/events", alice.key],
    ] as const) {
      const res = await get(path, key);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Task not found" });
    }
  });
});

describe("GET /api/v1/tasks/{id}/timeline", () => {
  const entries = [
    {
      seq: 1,
      kind: "start",
      name: "workflow",
      agentId: "orchestrator",
      status: "completed",
      startedAt: "2026-01-01T00:00:00.000Z",
      completedAt: "2026-01-01T00:00:00.010Z",
      durationMs: 10,
      parent: null,
      payload: { query: "q" },
    },
    {
      seq: 2,
      kind: "llm",
      name: "gpt-5-nano",
      agentId: "agent-1",
      status: "completed",
      startedAt: "2026-01-01T00:00:00.020Z",
      completedAt: "2026-01-01T00:00:01.520Z",
      durationMs: 1500,
      parent: "workflow",
    },
  ];

  it("renders entries and stats; duration once terminal", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "COMPLETED" });
    app.orchestrator.timelines.set(task.taskId, entries);
    const res = await get(`/api/v1/tasks/${task.taskId}/timeline`);
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      workflow_id: task.taskId,
      status: "TASK_STATUS_COMPLETED",
      events: [
        {
          seq: 1,
          kind: "start",
          name: "workflow",
          agent_id: "orchestrator",
          status: "completed",
          started_at: "2026-01-01T00:00:00.000Z",
          completed_at: "2026-01-01T00:00:00.010Z",
          duration_ms: 10,
          parent: null,
        },
        {
          seq: 2,
          kind: "llm",
          name: "gpt-5-nano",
          agent_id: "agent-1",
          status: "completed",
          started_at: "2026-01-01T00:00:00.020Z",
          completed_at: "2026-01-01T00:00:01.520Z",
          duration_ms: 1500,
          parent: "workflow",
        },
      ],
      stats: { total: 2, duration_ms: 1520 },
    });
    expect(app.orchestrator.calls.getTimeline.at(-1)).toEqual({
      userId: alice.id,
      taskId: task.taskId,
      includePayloads: false,
    });
  });

  it("adds payloads with include_payloads=true (null when an entry has none)", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    app.orchestrator.timelines.set(task.taskId, entries);
    for (const flag of ["true", "1", "TRUE"]) {
      const res = await get(`/api/v1/tasks/${task.taskId}/timeline?include_payloads=${flag}`);
      expect(res.body.events.map((e: { payload: unknown }) => e.payload)).toEqual([{ query: "q" }, null]);
      expect(res.body.stats).toEqual({ total: 2, duration_ms: null });
    }
    expect(app.orchestrator.calls.getTimeline.at(-1)!.includePayloads).toBe(true);
    const off = await get(`/api/v1/tasks/${task.taskId}/timeline?include_payloads=false`);
    expect(off.body.events[0]).not.toHaveProperty("payload");
    const bad = await get(`/api/v1/tasks/${task.taskId}/timeline?include_payloads=yes`);
    expect(bad.status).toBe(400);
    expect(bad.body).toEqual({ error: 'Invalid include_payloads parameter: "yes" (allowed: true, false)' });
  });

  it("an empty timeline has zero entries and no duration; 404 for others' tasks", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "QUEUED" });
    const res = await get(`/api/v1/tasks/${task.taskId}/timeline`);
    expect(res.body).toEqual({
      workflow_id: task.taskId,
      status: "TASK_STATUS_QUEUED",
      events: [],
      stats: { total: 0, duration_ms: null },
    });
    expect((await get(`/api/v1/tasks/${task.taskId}/timeline`, bob.key)).status).toBe(404);
    expect((await get("/api/v1/tasks/x/timeline")).status).toBe(404);
  });
});
