import { describe, expect, it } from "vitest";
import { ForbiddenError, NotFoundError, OverloadedError, UpstreamUnavailableError } from "@tog/core";
import { call, useTaskApp, TEST_RPM, type TaskApp, type TestUser } from "./support/task-app.ts";

const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

const DEFAULT_CONTEXT = {
  prompt_params: {},
  disable_ai: false,
  require_approval: false,
  history_window_size: 50,
  primers_count: 5,
  recents_count: 15,
  compression_trigger_ratio: 0.8,
  compression_target_ratio: 0.5,
};

let app: TaskApp;
let alice: TestUser;
let bob: TestUser;

useTaskApp((...fixture) => ([app, alice, bob] = fixture));

const submit = (json: unknown, key = alice.key) => call(app.base, "POST", "/api/v1/tasks", { key, json });
const lastCommand = () => app.orchestrator.calls.submitTask.at(-1)!;

async function expect400(json: unknown, error: string) {
  const res = await submit(json);
  expect(res.body).toEqual({ error });
  expect(res.status).toBe(400);
  expect(app.orchestrator.calls.submitTask).toHaveLength(0);
}

describe("POST /api/v1/tasks: success", () => {
  it("answers 200 with the 2.1 body, X-Workflow-ID = task_id and a generated X-Session-ID", async () => {
    const res = await submit({ query: "What is 2+2?" });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toMatch(/^application\/json/);
    expect(res.body).toEqual({
      task_id: expect.stringMatching(UUID_RE),
      status: "STATUS_CODE_OK",
      message: "Task submitted successfully",
      created_at: expect.any(String),
    });
    expect(Object.keys(res.body)).toEqual(["task_id", "status", "message", "created_at"]);
    expect(res.headers.get("x-workflow-id")).toBe(res.body.task_id);
    expect(res.headers.get("x-session-id")).toMatch(UUID_RE);
    expect(res.headers.get("x-ratelimit-limit")).toBe(String(TEST_RPM));
    expect(lastCommand()).toEqual({
      userId: alice.id,
      query: "What is 2+2?",
      sessionId: undefined,
      mode: undefined,
      context: DEFAULT_CONTEXT,
      streaming: false,
    });
  });

  it("passes the session id as the client sent it and echoes it in X-Session-ID", async () => {
    const res = await submit({ query: "hi", session_id: "my-chat-42" });
    expect(res.status).toBe(200);
    expect(res.headers.get("x-session-id")).toBe("my-chat-42");
    expect(lastCommand().sessionId).toBe("my-chat-42");

    const uuid = "6f1c2d3e-4a5b-4c6d-8e9f-0a1b2c3d4e5f";
    const again = await submit({ query: "hi", session_id: uuid });
    expect(again.headers.get("x-session-id")).toBe(uuid);

    // A header holds printable ASCII only: other ids come back percent-encoded, never a 500.
    const unicode = "chat 👩‍💻 日本 é";
    const encoded = await submit({ query: "hi", session_id: unicode });
    expect(encoded.status).toBe(200);
    expect(encoded.headers.get("x-session-id")).toBe(encodeURIComponent(unicode));
    expect(decodeURIComponent(encoded.headers.get("x-session-id")!)).toBe(unicode);
    expect(lastCommand().sessionId).toBe(unicode);
  });

  it("passes a requested mode and treats null fields as absent", async () => {
    for (const mode of ["simple", "standard", "complex", "supervisor"]) {
      const res = await submit({ query: "q", mode });
      expect(res.status).toBe(200);
      expect(lastCommand().mode).toBe(mode);
    }
    const res = await submit({
      query: "q",
      mode: null,
      session_id: null,
      model_tier: null,
      model_override: null,
      provider_override: null,
      context: null,
    });
    expect(res.status).toBe(200);
    expect(lastCommand()).toMatchObject({ mode: undefined, sessionId: undefined, context: DEFAULT_CONTEXT });
  });

  it("ignores unknown top-level fields", async () => {
    const res = await submit({ query: "q", research_strategy: "deep", stream: true });
    expect(res.status).toBe(200);
    expect(lastCommand().context).toEqual(DEFAULT_CONTEXT);
  });
});

describe("POST /api/v1/tasks: context normalization", () => {
  it("fills every recognized key's default and keeps free-form keys", async () => {
    await submit({ query: "q", context: { customer: { id: 7 }, locale: "de", flag: null } });
    expect(lastCommand().context).toEqual({ ...DEFAULT_CONTEXT, customer: { id: 7 }, locale: "de", flag: null });
  });

  it("keeps given values and drops null recognized keys (their defaults apply)", async () => {
    const context = {
      role: "analyst",
      system_prompt: "You are ${name}.",
      prompt_params: { name: "Ada" },
      template: "report",
      template_version: "2",
      disable_ai: true,
      history_window_size: 10,
      use_case_preset: "support",
      primers_count: 0,
      recents_count: 3,
      compression_trigger_ratio: 1,
      compression_target_ratio: 0.25,
      require_approval: true,
    };
    await submit({ query: "q", context });
    expect(lastCommand().context).toEqual(context);

    await submit({ query: "q", context: { role: null, history_window_size: null, disable_ai: null } });
    expect(lastCommand().context).toEqual(DEFAULT_CONTEXT);
  });

  it("top-level model controls override the context's; context values are the fallback", async () => {
    await submit({
      query: "q",
      model_tier: "large",
      provider_override: "anthropic",
      context: { model_tier: "small", model_override: "gpt-5-nano", provider_override: "openai" },
    });
    expect(lastCommand().context).toEqual({
      ...DEFAULT_CONTEXT,
      model_tier: "large",
      model_override: "gpt-5-nano",
      provider_override: "anthropic",
    });
  });

  it("leaves an absent tier absent (the orchestrator applies the catalog default)", async () => {
    await submit({ query: "q", model_override: "gpt-5-nano" });
    expect(lastCommand().context).toEqual({ ...DEFAULT_CONTEXT, model_override: "gpt-5-nano" });
    expect(lastCommand().context).not.toHaveProperty("model_tier");
  });

  it("folds template_name into template; equal values are accepted", async () => {
    await submit({ query: "q", context: { template_name: "summary" } });
    expect(lastCommand().context).toEqual({ ...DEFAULT_CONTEXT, template: "summary" });
    await submit({ query: "q", context: { template: "summary", template_name: "summary" } });
    expect(lastCommand().context).toEqual({ ...DEFAULT_CONTEXT, template: "summary" });
  });

  it("accepts disable_ai without model controls, and model controls with disable_ai false", async () => {
    expect((await submit({ query: "q", context: { disable_ai: true, template: "t" } })).status).toBe(200);
    expect((await submit({ query: "q", model_tier: "medium", context: { disable_ai: false } })).status).toBe(200);
  });
});

describe("POST /api/v1/tasks: validation", () => {
  it("requires a query (missing, null, empty or blank)", async () => {
    await expect400({}, "Query is required");
    await expect400({ query: null }, "Query is required");
    await expect400({ query: "" }, "Query is required");
    await expect400({ query: "  \n\t " }, "Query is required");
    await expect400({ mode: "fast" }, "Query is required");
    await expect400({ query: 42 }, "query must be a string");
    await expect400({ query: "x".repeat(100_001) }, "query must be at most 100000 characters");
    expect((await submit({ query: "x".repeat(100_000) })).status).toBe(200);
  });

  it("answers 400 `Query is required` to a bare POST without a body", async () => {
    const res = await call(app.base, "POST", "/api/v1/tasks", { key: alice.key });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({ error: "Query is required" });
  });

  it("refuses malformed JSON and non-object bodies", async () => {
    const bad = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      raw: '{"query": "x",',
      headers: { "Content-Type": "application/json" },
    });
    expect(bad.status).toBe(400);
    expect(bad.body.error).toMatch(/^Invalid request body: /);
    await expect400([{ query: "x" }], "Invalid request body: expected a JSON object");
  });

  it("refuses disable_ai together with any model control, naming them", async () => {
    await expect400(
      { query: "q", model_tier: "small", context: { disable_ai: true } },
      "disable_ai cannot be combined with model controls (found: model_tier)",
    );
    await expect400(
      { query: "q", model_override: "m", provider_override: "p", context: { disable_ai: true, model_tier: "large" } },
      "disable_ai cannot be combined with model controls (found: model_override, provider_override, context.model_tier)",
    );
    await expect400(
      { query: "q", context: { disable_ai: true, provider_override: "openai" } },
      "disable_ai cannot be combined with model controls (found: context.provider_override)",
    );
  });

  it("refuses an unknown mode, naming the allowed values (case-sensitive)", async () => {
    const allowed = "(allowed: simple, standard, complex, supervisor)";
    await expect400({ query: "q", mode: "fast" }, `Invalid mode: "fast" ${allowed}`);
    await expect400({ query: "q", mode: "SIMPLE" }, `Invalid mode: "SIMPLE" ${allowed}`);
    await expect400({ query: "q", mode: "" }, `Invalid mode: "" ${allowed}`);
    await expect400({ query: "q", mode: 3 }, `Invalid mode: 3 ${allowed}`);
  });

  it("refuses an unknown model_tier, top level or in context", async () => {
    await expect400({ query: "q", model_tier: "huge" }, 'Invalid model_tier: "huge" (allowed: small, medium, large)');
    await expect400(
      { query: "q", context: { model_tier: "Large" } },
      'Invalid context.model_tier: "Large" (allowed: small, medium, large)',
    );
  });

  it("refuses ambiguous template names", async () => {
    await expect400(
      { query: "q", context: { template: "a", template_name: "b" } },
      "template and template_name name different templates; supply only one",
    );
  });

  it("checks session_id and the model-control strings", async () => {
    const sessionMessage = "session_id must be a non-empty string of at most 255 characters";
    await expect400({ query: "q", session_id: "" }, sessionMessage);
    await expect400({ query: "q", session_id: "s".repeat(256) }, sessionMessage);
    await expect400({ query: "q", session_id: 12 }, sessionMessage);
    expect((await submit({ query: "q", session_id: "s".repeat(255) })).status).toBe(200);
    app.orchestrator.resetCalls();
    for (const id of ["tab\there", "x\u0010\u0003y", "del\u007f", "c1\u0085"]) {
      await expect400({ query: "q", session_id: id }, "session_id must not contain control characters");
    }
    app.orchestrator.resetCalls();
    await expect400(
      { query: "q", model_override: "" },
      "model_override must be a non-empty string of at most 255 characters",
    );
    await expect400(
      { query: "q", provider_override: 1 },
      "provider_override must be a non-empty string of at most 255 characters",
    );
  });

  it("names the context key whose value has the wrong type or range", async () => {
    const cases: [Record<string, unknown>, string][] = [
      [{ role: 5 }, "context.role must be a non-empty string of at most 255 characters"],
      [{ system_prompt: [] }, "context.system_prompt must be a string"],
      [{ prompt_params: [1] }, "context.prompt_params must be an object"],
      [{ prompt_params: "x" }, "context.prompt_params must be an object"],
      [{ model_override: false }, "context.model_override must be a non-empty string of at most 255 characters"],
      [{ template: "" }, "context.template must be a non-empty string of at most 255 characters"],
      [{ template_name: 1 }, "context.template_name must be a non-empty string of at most 255 characters"],
      [{ template_version: 2 }, "context.template_version must be a non-empty string of at most 255 characters"],
      [{ disable_ai: "true" }, "context.disable_ai must be a boolean"],
      [{ require_approval: 1 }, "context.require_approval must be a boolean"],
      [{ history_window_size: "50" }, "context.history_window_size must be an integer from 1 to 1000"],
      [{ history_window_size: 0 }, "context.history_window_size must be an integer from 1 to 1000"],
      [{ history_window_size: 2.5 }, "context.history_window_size must be an integer from 1 to 1000"],
      [{ primers_count: -1 }, "context.primers_count must be an integer from 0 to 1000"],
      [{ recents_count: 1001 }, "context.recents_count must be an integer from 0 to 1000"],
      [{ use_case_preset: {} }, "context.use_case_preset must be a non-empty string of at most 255 characters"],
      [
        { compression_trigger_ratio: 0 },
        "context.compression_trigger_ratio must be a number greater than 0 and at most 1",
      ],
      [
        { compression_target_ratio: 1.5 },
        "context.compression_target_ratio must be a number greater than 0 and at most 1",
      ],
      [
        { compression_target_ratio: "0.5" },
        "context.compression_target_ratio must be a number greater than 0 and at most 1",
      ],
    ];
    for (const [context, message] of cases) await expect400({ query: "q", context }, message);
    await expect400({ query: "q", context: [] }, "context must be an object");
    await expect400({ query: "q", context: "x" }, "context must be an object");
  });

  it("refuses a body that is not application/json with 415", async () => {
    const res = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      raw: "query=hello",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(res.status).toBe(415);
    expect(res.body).toEqual({ error: "Content-Type must be application/json" });
    const plain = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      raw: '{"query":"x"}',
      headers: { "Content-Type": "text/plain" },
    });
    expect(plain.status).toBe(415);
    const json = await submit({ query: "x" });
    expect(json.status).toBe(200);
    const withCharset = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      raw: '{"query":"x"}',
      headers: { "Content-Type": "application/json; charset=utf-8" },
    });
    expect(withCharset.status).toBe(200);
    expect(app.orchestrator.calls.submitTask).toHaveLength(2);
  });

  it("answers 401 before looking at the body", async () => {
    const res = await call(app.base, "POST", "/api/v1/tasks", { json: {} });
    expect(res.status).toBe(401);
    expect(res.body).toEqual({ error: "Unauthorized" });
    const bearer = await call(app.base, "POST", "/api/v1/tasks", {
      json: { query: "q" },
      headers: { Authorization: `Bearer ${(await app.tokens.issue(alice.id)).token}` },
    });
    expect(bearer.status).toBe(401);
  });
});

describe("POST /api/v1/tasks: orchestrator errors", () => {
  it("maps the orchestrator's named errors", async () => {
    const cases: [Error, number, string][] = [
      [new ForbiddenError(), 403, "Forbidden"],
      [new NotFoundError("Session not found"), 404, "Session not found"],
      [new UpstreamUnavailableError("Orchestrator unavailable"), 502, "Orchestrator unavailable"],
      [new OverloadedError("System overloaded"), 503, "System overloaded"],
    ];
    for (const [err, status, error] of cases) {
      app.orchestrator.failNext = err;
      const res = await submit({ query: "q" });
      expect(res.status).toBe(status);
      expect(res.body).toEqual({ error });
    }
  });

  it("an unexpected failure is a 500 in the contract's words, without internals", async () => {
    app.orchestrator.failNext = new Error("connect ECONNREFUSED 10.0.0.3:5432");
    const res = await submit({ query: "q" });
    expect(res.status).toBe(500);
    expect(res.body).toEqual({ error: "Failed to submit task: internal error" });
  });

  it("another user's session is refused (403)", async () => {
    expect((await submit({ query: "q", session_id: "alice-only" })).status).toBe(200);
    const res = await submit({ query: "q", session_id: "alice-only" }, bob.key);
    expect(res.status).toBe(403);
    expect(res.body).toEqual({ error: "Forbidden" });
  });
});

describe("POST /api/v1/tasks: Idempotency-Key", () => {
  it("replays the first response for the same key and body; a changed body is a new task", async () => {
    const key = `idem-${Date.now()}`;
    const first = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      json: { query: "once", session_id: "idem-session" },
      headers: { "Idempotency-Key": key },
    });
    expect(first.status).toBe(200);
    expect(first.headers.get("x-idempotency-cached")).toBeNull();

    const second = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      json: { query: "once", session_id: "idem-session" },
      headers: { "Idempotency-Key": key },
    });
    expect(second.status).toBe(200);
    expect(second.text).toBe(first.text);
    expect(second.headers.get("x-idempotency-cached")).toBe("true");
    expect(second.headers.get("x-idempotency-key")).toBe(key);
    expect(second.headers.get("x-workflow-id")).toBe(first.body.task_id);
    expect(second.headers.get("x-session-id")).toBe("idem-session");
    expect(app.orchestrator.calls.submitTask).toHaveLength(1);

    const changed = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      json: { query: "twice", session_id: "idem-session" },
      headers: { "Idempotency-Key": key },
    });
    expect(changed.status).toBe(200);
    expect(changed.body.task_id).not.toBe(first.body.task_id);
    expect(app.orchestrator.calls.submitTask).toHaveLength(2);
  });

  it("concurrent duplicates create exactly one task", async () => {
    const key = `idem-concurrent-${Date.now()}`;
    const results = await Promise.all(
      Array.from({ length: 5 }, () =>
        call(app.base, "POST", "/api/v1/tasks", {
          key: alice.key,
          json: { query: "burst" },
          headers: { "Idempotency-Key": key },
        }),
      ),
    );
    expect(results.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(new Set(results.map((r) => r.body.task_id)).size).toBe(1);
    expect(app.orchestrator.calls.submitTask).toHaveLength(1);
  });

  it("does not cache a 400", async () => {
    const key = `idem-400-${Date.now()}`;
    const bad = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      json: { query: "" },
      headers: { "Idempotency-Key": key },
    });
    expect(bad.status).toBe(400);
    const again = await call(app.base, "POST", "/api/v1/tasks", {
      key: alice.key,
      json: { query: "" },
      headers: { "Idempotency-Key": key },
    });
    expect(again.status).toBe(400);
    expect(again.headers.get("x-idempotency-cached")).toBeNull();
  });
});

describe("POST /api/v1/tasks/stream", () => {
  it("answers 201 with the stream URL, the submit headers and Location", async () => {
    const res = await call(app.base, "POST", "/api/v1/tasks/stream", {
      key: alice.key,
      json: { query: "stream me", session_id: "ext-1" },
    });
    expect(res.status).toBe(201);
    const id = res.body.task_id as string;
    expect(res.body).toEqual({ task_id: id, workflow_id: id, stream_url: `/api/v1/stream/sse?workflow_id=${id}` });
    expect(id).toMatch(UUID_RE);
    expect(res.headers.get("x-workflow-id")).toBe(id);
    expect(res.headers.get("x-session-id")).toBe("ext-1");
    expect(res.headers.get("location")).toBe(`/api/v1/tasks/${id}`);
    expect(lastCommand()).toMatchObject({ streaming: true, sessionId: "ext-1", context: DEFAULT_CONTEXT });
  });

  it("accepts a bearer token", async () => {
    const { token } = await app.tokens.issue(bob.id);
    const res = await call(app.base, "POST", "/api/v1/tasks/stream", {
      json: { query: "q" },
      headers: { Authorization: `Bearer ${token}` },
    });
    expect(res.status).toBe(201);
    expect(lastCommand().userId).toBe(bob.id);
  });

  it("applies the same body rules", async () => {
    const stream = (json: unknown) => call(app.base, "POST", "/api/v1/tasks/stream", { key: alice.key, json });
    expect((await stream({})).body).toEqual({ error: "Query is required" });
    expect((await stream({ query: "q", mode: "x" })).body.error).toMatch(/^Invalid mode: "x"/);
    expect((await stream({ query: "q", model_tier: "small", context: { disable_ai: true } })).status).toBe(400);
    const form = await call(app.base, "POST", "/api/v1/tasks/stream", {
      key: alice.key,
      raw: "q",
      headers: { "Content-Type": "text/plain" },
    });
    expect(form.status).toBe(415);
    expect(app.orchestrator.calls.submitTask).toHaveLength(0);
  });

  it("is idempotent too", async () => {
    const key = `idem-stream-${Date.now()}`;
    const a = await call(app.base, "POST", "/api/v1/tasks/stream", {
      key: alice.key,
      json: { query: "s" },
      headers: { "Idempotency-Key": key },
    });
    const b = await call(app.base, "POST", "/api/v1/tasks/stream", {
      key: alice.key,
      json: { query: "s" },
      headers: { "Idempotency-Key": key },
    });
    expect(b.status).toBe(201);
    expect(b.body.task_id).toBe(a.body.task_id);
    expect(b.headers.get("x-idempotency-cached")).toBe("true");
    expect(b.headers.get("location")).toBe(`/api/v1/tasks/${a.body.task_id}`);
    expect(app.orchestrator.calls.submitTask).toHaveLength(1);
  });
});
