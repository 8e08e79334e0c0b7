// @tog/sdk against the running system (every service its own process, auth on): every endpoint,
// typed errors, idempotent submit, paging iterators, approvals, the six session calls, and the
// streams: a stream service SIGKILLed and restarted mid-stream, with the SDK resuming on its own
// into one gap-free sequence (SSE and WebSocket).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { RunningService } from "@tog/devstack";
import {
  BadRequestError,
  NotFoundError,
  RateLimitError,
  TogClient,
  UnauthorizedError,
  type EventOf,
  type ReconnectInfo,
  type TogEvent,
} from "@tog/sdk";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";

let env: E2eEnvironment;
let tog: TogClient;
let key: string;

const range = (from: number, to: number) => Array.from({ length: to - from + 1 }, (_, i) => from + i);

beforeAll(async () => {
  env = await startE2eEnvironment({
    allowRouterErrors: true, // the stream service is killed mid-stream
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: {
      worker: { OFFLINE_CHUNK_DELAY_MS: "40", APPROVAL_TIMEOUT_SECONDS: "30" },
      stream: { STREAM_RETRY_MS: "200", STREAM_KEEPALIVE_MS: "1000", SHUTDOWN_TIMEOUT_MS: "3000" },
    },
    // the public router `npm start` picks (nginx when installed): streams resume through it
    router: "auto",
  });
  key = (await env.createApiKey({ user: "sdk@example.com", createUser: true })).key;
  // The SDK takes the server root or the API base.
  tog = new TogClient({ baseUrl: env.baseUrl, apiKey: key });
}, 120_000);
afterAll(async () => {
  await env?.close();
});

describe("tasks", () => {
  it("submits with a generated Idempotency-Key, replays a given one, gets, waits, lists, pages events, timeline", async () => {
    const a = await tog.tasks.submit({ query: "Say hello", mode: "simple" });
    expect(a).toMatchObject({ task_id: expect.any(String), status: "STATUS_CODE_OK", replayed: false });
    expect(a.workflow_id).toBe(a.task_id);
    expect(a.session_id).toMatch(/^[0-9a-f-]{36}$/);
    expect(a.idempotency_key).toMatch(/^[0-9a-f-]{36}$/);
    const again = await tog.tasks.submit({ query: "Say hello", mode: "simple" }, { idempotencyKey: a.idempotency_key });
    expect(again).toMatchObject({ task_id: a.task_id, replayed: true });

    const done = await tog.tasks.waitUntilDone(a.task_id, { intervalMs: 200, timeoutMs: 30_000 });
    expect(done.status).toBe("TASK_STATUS_COMPLETED");
    expect(typeof done.result).toBe("string");
    expect((await tog.tasks.get(a.task_id)).status).toBe("TASK_STATUS_COMPLETED");

    const stored = [];
    for await (const e of tog.tasks.events(a.task_id, { pageSize: 3 })) stored.push(e);
    expect(stored.map((e) => e.seq)).toEqual(range(1, stored.length));
    expect(stored.at(-1)!.type).toBe("WORKFLOW_COMPLETED");

    const timeline = await tog.tasks.timeline(a.task_id);
    expect(timeline).toMatchObject({ workflow_id: a.task_id });

    for (let i = 0; i < 4; i++)
      await tog.tasks.submit({ query: `list me ${i}`, mode: "simple", session_id: "sdk-list" });
    const listed = [];
    for await (const t of tog.tasks.list({ sessionId: "sdk-list", pageSize: 3 })) listed.push(t);
    expect(listed).toHaveLength(4);
    expect(new Set(listed.map((t) => t.task_id)).size).toBe(4);
    const firstTwo = [];
    for await (const t of tog.tasks.list({ pageSize: 1, limit: 2 })) firstTwo.push(t);
    expect(firstTwo).toHaveLength(2);
  });

  it("cancel: accepted while running, not an error when already terminal", async () => {
    const t = await tog.tasks.submit({
      query: "Research the history of Rome, then compare it with Athens, and summarize both",
      mode: "complex",
    });
    const first = await tog.tasks.cancel(t.task_id, "changed my mind");
    expect(first.accepted).toBe(true);
    const final = await tog.tasks.waitUntilDone(t.task_id, { intervalMs: 200, timeoutMs: 30_000 });
    expect(final.status).toBe("TASK_STATUS_CANCELLED");
    expect(await tog.tasks.cancel(t.task_id)).toEqual({
      accepted: false,
      message: expect.any(String),
      status: "CANCELLED",
    });
  });

  it("throws typed errors carrying the status and the server's message", async () => {
    const missing = await tog.tasks.get("7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d").catch((e: unknown) => e);
    expect(missing).toBeInstanceOf(NotFoundError);
    expect(missing).toMatchObject({ status: 404, message: "Task not found" });
    const bad = await tog.tasks.submit({ query: "" }).catch((e: unknown) => e);
    expect(bad).toBeInstanceOf(BadRequestError);
    expect(bad).toMatchObject({ status: 400, message: "Query is required" });
    const anon = await new TogClient({ baseUrl: env.baseUrl }).tasks.listPage().catch((e: unknown) => e);
    expect(anon).toBeInstanceOf(UnauthorizedError);
    expect(anon).toMatchObject({ status: 401, message: "Unauthorized" });
    // Streams too: over SSE the HTTP answer, over WebSocket the server's 4404 close and its reason.
    const unknown = "7d0c2f3e-5b7a-4c1e-9a55-0d6f0f1b2c3d";
    for (const [transport, message] of [
      ["sse", "Task not found"],
      ["ws", `Task not found (workflow_id ${unknown})`],
    ] as const) {
      const reconnects: ReconnectInfo[] = [];
      const err = await tog
        .stream(unknown, { transport, onReconnect: (i) => reconnects.push(i) })
        [Symbol.asyncIterator]()
        .next()
        .catch((e: unknown) => e);
      expect(err, transport).toBeInstanceOf(NotFoundError);
      expect(err, transport).toMatchObject({ status: 404, message });
      expect(reconnects, transport).toEqual([]);
    }
  });

  it("honours AbortSignal", async () => {
    const ctrl = new AbortController();
    ctrl.abort();
    await expect(tog.tasks.listPage({}, { signal: ctrl.signal })).rejects.toMatchObject({ name: "AbortError" });
    const t = await tog.tasks.submit({ query: "Write a long essay about streams", mode: "simple" });
    const streamCtrl = new AbortController();
    const seen: number[] = [];
    const reading = (async () => {
      for await (const e of tog.stream(t.task_id, { signal: streamCtrl.signal })) {
        seen.push(e.seq);
        if (seen.length === 2) streamCtrl.abort();
      }
    })();
    await expect(reading).rejects.toMatchObject({ name: "AbortError" });
    expect(seen).toEqual([1, 2]);
  });
});

describe("the document and access tokens", () => {
  it("reads the OpenAPI document and mints a bearer token that opens a stream", async () => {
    const doc = await tog.openApi();
    expect(doc).toMatchObject({
      openapi: "3.0.3",
      paths: expect.objectContaining({ "/api/v1/tasks": expect.any(Object) }),
    });
    const minted = await tog.accessToken({ ttl_seconds: 120 });
    expect(minted).toMatchObject({ token_type: "Bearer", expires_in: 120, access_token: expect.any(String) });
    const t = await tog.tasks.submit({ query: "Say hello", mode: "simple" });
    const bearer = new TogClient({ baseUrl: env.baseUrl, token: minted.access_token });
    const types = [];
    for await (const e of bearer.stream(t.task_id)) types.push(e.type);
    expect(types.at(-1)).toBe("WORKFLOW_COMPLETED");
  });
});

describe("429 and Retry-After", () => {
  it("retries a safe call after Retry-After and succeeds", async () => {
    const variant = await env.startVariant("gateway", { RATE_LIMIT_BURST: "1", RATE_LIMIT_RPM: "100000" });
    // A key of its own: the limiter's buckets live in Redis per key, shared with the main gateway,
    // so the other tests' requests in the same second would already have used this burst of 1.
    const own = (await env.createApiKey({ user: "sdk-429@example.com", createUser: true })).key;
    const limited = new TogClient({ baseUrl: variant.baseUrl, apiKey: own, maxRetries: 0 });
    const patient = new TogClient({ baseUrl: variant.baseUrl, apiKey: own, maxRetries: 3 });
    await limited.tasks.listPage();
    const refused = await limited.tasks.listPage().catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(RateLimitError);
    expect((refused as RateLimitError).retryAfter).toBeGreaterThanOrEqual(1);
    const started = Date.now();
    const page = await patient.tasks.listPage({ limit: 1 });
    expect(page.tasks.length).toBeLessThanOrEqual(1);
    expect(Date.now() - started).toBeGreaterThanOrEqual(500);
  });
});

describe("approvals", () => {
  it("waits for APPROVAL_REQUESTED on the stream and approves it", async () => {
    const t = await tog.tasks.submit({
      query: "Summarize the plan",
      mode: "simple",
      context: { require_approval: true },
    });
    let requested: EventOf<"APPROVAL_REQUESTED"> | undefined;
    const types: TogEvent["type"][] = [];
    for await (const e of tog.stream(t.task_id)) {
      types.push(e.type);
      if (e.type === "APPROVAL_REQUESTED") {
        requested = e;
        // typed by `type`: data.approval_id is a string
        const decided = await tog.approvals.approve(t.task_id, e.data.approval_id, "go ahead");
        expect(decided).toMatchObject({
          status: "sent",
          success: true,
          approval_id: e.data.approval_id,
          workflow_id: t.task_id,
        });
      }
    }
    expect(requested).toBeDefined();
    expect(types).toContain("APPROVAL_DECISION");
    expect(types.at(-1)).toBe("WORKFLOW_COMPLETED");
  });
});

describe("sessions", () => {
  it("list, get, history, turns, rename, delete", async () => {
    const t = await tog.tasks.submit({ query: "Remember the colour blue", mode: "simple", session_id: "sdk-session" });
    await tog.tasks.waitUntilDone(t.task_id, { intervalMs: 200, timeoutMs: 30_000 });
    const all = [];
    for await (const s of tog.sessions.list({ pageSize: 1 })) all.push(s);
    expect(all.length).toBeGreaterThanOrEqual(2);
    const detail = await tog.sessions.get("sdk-session");
    expect(detail).toMatchObject({
      session_id: expect.stringMatching(/^[0-9a-f-]{36}$/),
      external_id: "sdk-session",
      task_count: 1,
    });
    const history = await tog.sessions.history("sdk-session");
    expect(history.tasks.map((x) => x.task_id)).toEqual([t.task_id]);
    const turns = [];
    for await (const turn of tog.sessions.turns("sdk-session")) turns.push(turn);
    expect(turns).toHaveLength(1);
    expect(turns[0]).toMatchObject({ task_id: t.task_id, user_query: "Remember the colour blue" });
    expect(await tog.sessions.rename("sdk-session", "  Colours  ")).toMatchObject({ title: "Colours" });
    await tog.sessions.delete("sdk-session");
    await tog.sessions.delete("sdk-session");
    await expect(tog.sessions.get("sdk-session")).rejects.toBeInstanceOf(NotFoundError);
  });
});

describe("streams resume on their own", () => {
  /** The stream instance behind the router (a restart replaces it, on the same port). */
  let current: RunningService | undefined;
  for (const transport of ["sse", "ws"] as const) {
    it(`${transport}: the stream service is SIGKILLed and restarted mid-stream; the caller sees one gap-free sequence`, async () => {
      const instance: RunningService = current ?? env.service("stream");
      const port = Number(new URL(instance.url).port);
      const submitted = await tog.tasks.submitAndStream(
        { query: "Write a long paragraph about rivers" },
        { transport },
      );
      const reconnects: ReconnectInfo[] = [];
      const seen: TogEvent[] = [];
      const options = {
        transport,
        onReconnect: (i: ReconnectInfo) => reconnects.push(i),
        backoff: { initialMs: 100, maxMs: 1_000 },
        idleTimeoutMs: 3_000,
      };
      for await (const e of tog.stream(submitted.workflow_id, options)) {
        seen.push(e);
        if (seen.length === 3) {
          // The connection dies under the reader; the task keeps producing meanwhile.
          await instance.kill();
          await new Promise((r) => setTimeout(r, 500));
          current = await env.stack.startInstance("stream", {
            port,
            env: { STREAM_RETRY_MS: "200", STREAM_KEEPALIVE_MS: "1000" },
          });
        }
      }
      expect(reconnects.length, "reconnected at least once").toBeGreaterThanOrEqual(1);
      const stored = [];
      for await (const e of tog.tasks.events(submitted.workflow_id)) stored.push(e);
      expect(seen.map((e) => e.seq)).toEqual(range(1, stored.length));
      expect(seen.map((e) => e.type)).toEqual(stored.map((e) => e.type));
      expect(seen.at(-1)!.type).toBe("WORKFLOW_COMPLETED");
      // the stream returned by submitAndStream is the same sequence, read later (replay)
      const replayed = [];
      for await (const e of submitted.events) replayed.push(e.seq);
      expect(replayed).toEqual(range(1, stored.length));
    });
  }

  it("a types filter yields only those types and still ends at the terminal event", async () => {
    const t = await tog.tasks.submit({ query: "Say hello", mode: "simple" });
    for (const transport of ["sse", "ws"] as const) {
      const got = [];
      for await (const e of tog.stream(t.task_id, { transport, types: ["LLM_PARTIAL"] })) got.push(e.type);
      expect(got.length).toBeGreaterThan(0);
      expect(new Set(got)).toEqual(new Set(["LLM_PARTIAL"]));
    }
  });
});
