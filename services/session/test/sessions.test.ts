// The session service in this process against the real PostgreSQL and Redis, with rows written
// as the orchestrator and the event persister write them. The end-to-end suite
// (tests-e2e/sessions) runs the same rules through real tasks and the service's own process.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startSessionRetention } from "../src/sessions/retention.ts";
import {
  call,
  completedRun,
  insertSession,
  insertTask,
  logger,
  startSessionApp,
  type SessionApp,
  type TestUser,
} from "./support/session-app.ts";

let app: SessionApp;
let alice: TestUser;
let bob: TestUser;

beforeAll(async () => {
  app = await startSessionApp();
  alice = await app.newUser("alice");
  bob = await app.newUser("bob");
}, 60_000);
afterAll(async () => {
  await app?.close();
});

const get = (user: TestUser, path: string) => call(app.base, "GET", `/api/v1${path}`, { key: user.key });

async function eventually<T>(read: () => Promise<T>, ok: (value: T) => boolean, timeoutMs = 3_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (ok(value) || Date.now() > end) return value;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("list", () => {
  it("pages the user's sessions by most recent activity, without deleted ones", async () => {
    const user = await app.newUser("lister");
    const base = Date.now() - 60_000;
    const ids: string[] = [];
    for (let i = 0; i < 5; i++)
      ids.push(await insertSession(app.db, user.id, { lastActivityAt: new Date(base + i * 1_000) }));
    await insertSession(app.db, alice.id);
    await app.db
      .$executeRaw`UPDATE sessions SET deleted_at = now(), deleted_by = ${user.id}::uuid WHERE id = ${ids[2]}::uuid`;

    const first = await get(user, "/sessions?limit=2");
    expect(first.status).toBe(200);
    expect(first.body.total_count).toBe(4);
    expect(first.body.sessions.map((s: any) => s.session_id)).toEqual([ids[4], ids[3]]);
    expect(first.body.sessions[0]).toEqual({
      session_id: ids[4],
      user_id: user.id,
      external_id: null,
      title: null,
      task_count: 0,
      tokens_used: 0,
      token_budget: 1_000_000,
      total_cost_usd: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      last_activity_at: new Date(base + 4_000).toISOString(),
    });
    const second = await get(user, "/sessions?limit=2&offset=2");
    expect(second.body.sessions.map((s: any) => s.session_id)).toEqual([ids[1], ids[0]]);
    expect((await get(user, "/sessions?offset=4")).body.sessions).toEqual([]);
    expect((await get(user, "/sessions")).body.sessions).toHaveLength(4);
  });

  it("refuses out-of-range paging with the parameter's rule", async () => {
    for (const [q, msg] of [
      ["limit=0", "Invalid limit parameter: must be an integer from 1 to 100"],
      ["limit=101", "Invalid limit parameter: must be an integer from 1 to 100"],
      ["limit=abc", "Invalid limit parameter: must be an integer from 1 to 100"],
      ["offset=-1", "Invalid offset parameter: must be an integer from 0 to 2147483647"],
      ["offset=2147483648", "Invalid offset parameter: must be an integer from 0 to 2147483647"],
      ["offset=1.5", "Invalid offset parameter: must be an integer from 0 to 2147483647"],
    ]) {
      const res = await get(alice, `/sessions?${q}`);
      expect(res.status, q).toBe(400);
      expect(res.body).toEqual({ error: msg });
    }
    expect((await call(app.base, "GET", "/api/v1/sessions")).status).toBe(401);
  });
});

describe("one session", () => {
  it("detail, history and turns by UUID (any case) and by external id", async () => {
    const ext = `chat-${randomUUID()}`;
    const id = await insertSession(app.db, alice.id, { externalId: ext });
    const created = new Date(Date.now() - 10_000);
    const t1 = await insertTask(app.db, alice.id, id, {
      query: "first",
      result: "one",
      createdAt: created,
      events: completedRun("one"),
    });
    const t2 = await insertTask(app.db, alice.id, id, {
      query: "second",
      status: "FAILED",
      result: null,
      createdAt: new Date(created.getTime() + 5_000),
    });
    for (const ref of [id, id.toUpperCase(), ext, encodeURIComponent(ext)]) {
      const detail = await get(alice, `/sessions/${ref}`);
      expect(detail.status, ref).toBe(200);
      expect(detail.body).toMatchObject({
        session_id: id,
        external_id: ext,
        context: { external_id: ext },
        tokens_remaining: 1_000_000,
      });
      expect(Date.parse(detail.body.expires_at) - Date.parse(detail.body.last_activity_at)).toBe(30 * 86_400_000);
      const history = await get(alice, `/sessions/${ref}/history`);
      expect(history.status).toBe(200);
      expect(history.body.tasks.map((t: any) => t.task_id)).toEqual([t1, t2]);
      const turns = await get(alice, `/sessions/${ref}/events`);
      expect(turns.status).toBe(200);
      expect(turns.body.turns.map((t: any) => t.task_id)).toEqual([t1, t2]);
    }
    const history = (await get(alice, `/sessions/${id}/history`)).body;
    expect(history.total).toBe(2);
    expect(history.tasks[0]).toEqual({
      task_id: t1,
      workflow_id: t1,
      query: "first",
      status: "TASK_STATUS_COMPLETED",
      mode: "EXECUTION_MODE_SIMPLE",
      result: "one",
      error_message: "",
      error_type: null,
      model_used: null,
      provider: null,
      total_tokens: 10,
      input_tokens: 4,
      output_tokens: 6,
      total_cost_usd: 0.001,
      duration_ms: 1_500,
      agents_used: 1,
      tools_invoked: 0,
      created_at: created.toISOString(),
      started_at: created.toISOString(),
      completed_at: new Date(created.getTime() + 1_500).toISOString(),
    });
    expect(history.tasks[1]).toMatchObject({ status: "TASK_STATUS_FAILED", result: null, agents_used: null });
  });

  it("history's agents_used and tools_invoked outlive the log's events, and read a step an earlier release wrote", async () => {
    const id = await insertSession(app.db, alice.id);
    const created = new Date(Date.now() - 10_000);
    const now = await insertTask(app.db, alice.id, id, { createdAt: created, events: completedRun("now") });
    const earlier = await insertTask(app.db, alice.id, id, {
      createdAt: new Date(created.getTime() + 1_000),
      events: completedRun("earlier"),
      earlierRelease: true,
    });
    // The event retention purges by age, whatever the session still shows.
    await app.db.$executeRaw`DELETE FROM task_events WHERE task_id = ${now}::uuid`;
    const history = (await get(alice, `/sessions/${id}/history`)).body;
    expect(history.tasks.map((t: any) => [t.task_id, t.agents_used, t.tools_invoked])).toEqual([
      [now, 1, 0],
      [earlier, 1, 0],
    ]);
  });

  it("turns: global numbering across pages, LLM_PARTIAL left out, final_output falls back to the first LLM_OUTPUT", async () => {
    const id = await insertSession(app.db, alice.id);
    const start = Date.now() - 60_000;
    const tasks: string[] = [];
    for (let i = 0; i < 5; i++) {
      tasks.push(
        await insertTask(app.db, alice.id, id, {
          query: `q${i}`,
          result: `r${i}`,
          createdAt: new Date(start + i * 1_000),
          events: completedRun(`result number ${i}`),
        }),
      );
    }
    const failed = await insertTask(app.db, alice.id, id, {
      query: "denied",
      status: "FAILED",
      result: null,
      createdAt: new Date(start + 10_000),
      events: [
        { type: "WORKFLOW_STARTED" },
        { type: "LLM_PARTIAL", agent_id: "generalist" },
        {
          type: "LLM_OUTPUT",
          agent_id: "generalist",
          message: "Response from offline-small",
          data: { output: "calculator(2+2)" },
        },
        {
          type: "LLM_OUTPUT",
          agent_id: "generalist",
          message: "Response from offline-small",
          data: { output: "second" },
        },
        { type: "ERROR_OCCURRED", data: { terminal: true, error_type: "APPROVAL_DENIED" } },
      ],
    });

    const page = await get(alice, `/sessions/${id}/events?limit=2&offset=2`);
    expect(page.status).toBe(200);
    expect(page.body).toMatchObject({ session_id: id, count: 2, total_count: 6, limit: 2, offset: 2 });
    expect(page.body.turns.map((t: any) => [t.turn, t.task_id, t.user_query, t.final_output])).toEqual([
      [3, tasks[2], "q2", "r2"],
      [4, tasks[3], "q3", "r3"],
    ]);
    const turn = page.body.turns[0];
    expect(turn.events.map((e: any) => e.type)).toEqual([
      "WORKFLOW_STARTED",
      "AGENT_STARTED",
      "LLM_PROMPT",
      "LLM_OUTPUT",
      "AGENT_COMPLETED",
      "WORKFLOW_COMPLETED",
    ]);
    expect(turn.events[0]).toEqual({
      workflow_id: tasks[2],
      type: "WORKFLOW_STARTED",
      agent_id: "orchestrator",
      message: "WORKFLOW_STARTED",
      timestamp: expect.any(String),
      seq: 1,
    });
    expect(turn.metadata).toEqual({ tokens_used: 10, execution_time_ms: 1_500, agents_involved: ["generalist"] });
    expect(turn).toMatchObject({ status: "TASK_STATUS_COMPLETED", timestamp: new Date(start + 2_000).toISOString() });

    const last = await get(alice, `/sessions/${id}/events?limit=10&offset=5`);
    expect(last.body.turns).toHaveLength(1);
    expect(last.body.turns[0]).toMatchObject({
      turn: 6,
      task_id: failed,
      final_output: "calculator(2+2)",
      status: "TASK_STATUS_FAILED",
    });
    expect(last.body.turns[0].events.map((e: any) => e.seq)).toEqual([1, 3, 4, 5]);

    const defaults = await get(alice, `/sessions/${id}/events`);
    expect(defaults.body).toMatchObject({ count: 6, limit: 10, offset: 0 });
    expect(defaults.body.turns.map((t: any) => t.turn)).toEqual([1, 2, 3, 4, 5, 6]);
    expect((await get(alice, `/sessions/${id}/events?offset=6`)).body).toMatchObject({
      count: 0,
      total_count: 6,
      turns: [],
    });

    const payload = await get(alice, `/sessions/${id}/events?limit=1&include_payload=true`);
    expect(payload.body.turns[0].events.at(-1).data).toMatchObject({ result: "result number 0", agents_used: 1 });
    for (const q of ["limit=0", "limit=101", "offset=-1", "include_payload=maybe"])
      expect((await get(alice, `/sessions/${id}/events?${q}`)).status, q).toBe(400);
  });

  it("ownership and deletion: 403 for another user except the events endpoint (404); 404 once deleted; delete is idempotent", async () => {
    const ext = `owned-${randomUUID()}`;
    const id = await insertSession(app.db, alice.id, { externalId: ext });
    // External ids are per user (docs/security.md): alice's id names nothing of bob's.
    for (const path of ["", "/history", "/events"])
      expect((await get(bob, `/sessions/${ext}${path}`)).body).toEqual({ error: "Session not found" });
    expect(
      (await call(app.base, "PATCH", `/api/v1/sessions/${ext}`, { key: bob.key, json: { title: "mine" } })).status,
    ).toBe(404);
    expect((await call(app.base, "DELETE", `/api/v1/sessions/${ext}`, { key: bob.key })).status).toBe(404);
    for (const ref of [id]) {
      expect((await get(bob, `/sessions/${ref}`)).status).toBe(403);
      expect((await get(bob, `/sessions/${ref}`)).body).toEqual({ error: "Forbidden" });
      expect((await get(bob, `/sessions/${ref}/history`)).status).toBe(403);
      expect((await get(bob, `/sessions/${ref}/events`)).body).toEqual({ error: "Session not found" });
      expect(
        (await call(app.base, "PATCH", `/api/v1/sessions/${ref}`, { key: bob.key, json: { title: "mine" } })).status,
      ).toBe(403);
      expect((await call(app.base, "DELETE", `/api/v1/sessions/${ref}`, { key: bob.key })).status).toBe(403);
    }
    expect((await get(bob, "/sessions")).body.sessions.map((s: any) => s.session_id)).not.toContain(id);
    for (const ref of [randomUUID(), "no-such-session"]) {
      expect((await get(alice, `/sessions/${ref}`)).body).toEqual({ error: "Session not found" });
      expect((await call(app.base, "DELETE", `/api/v1/sessions/${ref}`, { key: alice.key })).status).toBe(404);
    }

    expect((await get(alice, `/sessions/${ext}`)).status).toBe(200); // cached now
    const del = await call(app.base, "DELETE", `/api/v1/sessions/${ext}`, { key: alice.key });
    expect(del.status).toBe(204);
    expect(del.text).toBe("");
    const row = (
      await app.db.$queryRaw<{ deleted_at: Date | null; deleted_by: string | null }[]>`
      SELECT deleted_at, deleted_by::text FROM sessions WHERE id = ${id}::uuid`
    )[0]!;
    expect(row.deleted_at).toBeInstanceOf(Date);
    expect(row.deleted_by).toBe(alice.id);
    for (const ref of [id, ext]) {
      for (const path of ["", "/history", "/events"])
        expect((await get(alice, `/sessions/${ref}${path}`)).status, `${ref}${path}`).toBe(404);
      expect(
        (await call(app.base, "PATCH", `/api/v1/sessions/${ref}`, { key: alice.key, json: { title: "x" } })).status,
      ).toBe(404);
      expect((await call(app.base, "DELETE", `/api/v1/sessions/${ref}`, { key: alice.key })).status).toBe(204);
      expect((await call(app.base, "DELETE", `/api/v1/sessions/${ref}`, { key: bob.key })).status).toBe(
        ref === id ? 403 : 404,
      );
    }
    const again = (
      await app.db.$queryRaw<{ deleted_at: Date }[]>`SELECT deleted_at FROM sessions WHERE id = ${id}::uuid`
    )[0]!;
    expect(again.deleted_at).toEqual(row.deleted_at);
    expect((await get(alice, "/sessions?limit=100")).body.sessions.map((s: any) => s.session_id)).not.toContain(id);
  });

  it("PATCH stores the cleaned title and answers it; refuses empty, over-long and non-string titles", async () => {
    const id = await insertSession(app.db, alice.id);
    const res = await call(app.base, "PATCH", `/api/v1/sessions/${id}`, {
      key: alice.key,
      json: { title: "  👩\u200D💻 Release\u200B plan\n" },
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      session_id: id,
      external_id: null,
      title: "👩\u200D💻 Release plan",
      updated_at: expect.any(String),
    });
    expect((await get(alice, `/sessions/${id}`)).body).toMatchObject({
      title: "👩\u200D💻 Release plan",
      context: { title: "👩\u200D💻 Release plan" },
    });
    const sixty = "😀".repeat(60);
    expect(
      (await call(app.base, "PATCH", `/api/v1/sessions/${id}`, { key: alice.key, json: { title: sixty } })).body.title,
    ).toBe(sixty);
    for (const [body, status, error] of [
      [{ title: `${sixty}😀` }, 400, "title must be at most 60 characters (got 61)"],
      [
        { title: " \u200B " },
        400,
        "title must not be empty (after removing control characters and surrounding whitespace)",
      ],
      [{}, 400, "title is required"],
      [{ title: 5 }, 400, "title must be a string"],
    ] as const) {
      const r = await call(app.base, "PATCH", `/api/v1/sessions/${id}`, { key: alice.key, json: body });
      expect(r.status, JSON.stringify(body)).toBe(status);
      expect(r.body).toEqual({ error: error });
    }
    const text = await call(app.base, "PATCH", `/api/v1/sessions/${id}`, {
      key: alice.key,
      raw: "title=x",
      headers: { "Content-Type": "text/plain" },
    });
    expect(text.status).toBe(415);
    expect((await get(alice, `/sessions/${id}`)).body.title).toBe(sixty);
  });
});

describe("cache", () => {
  it("serves reads from Redis and drops them when another process changes the session or its tasks", async () => {
    const id = await insertSession(app.db, alice.id);
    expect((await get(alice, `/sessions/${id}`)).body.task_count).toBe(0);
    const keys = await app.redis.keys(`${app.redis.options.keyPrefix}sess:${id}:*`);
    expect(keys.length).toBeGreaterThan(0);

    // The orchestrator's submit: a task row and the session's counters, in one transaction.
    const taskId = randomUUID();
    await app.db.$transaction([
      app.db
        .$executeRaw`INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id) VALUES (${taskId}::uuid, ${alice.id}::uuid, ${id}::uuid, 'hi', 'QUEUED', '{}'::jsonb, ${"0".repeat(32)})`,
      app.db
        .$executeRaw`UPDATE sessions SET task_count = task_count + 1, last_activity_at = now(), updated_at = now() WHERE id = ${id}::uuid`,
    ]);
    await app.sessionChanged(id);
    const detail = await eventually(
      () => get(alice, `/sessions/${id}`),
      (r) => r.body.task_count === 1,
      2_000,
    );
    expect(detail.body.task_count).toBe(1);
    const queued = await get(alice, `/sessions/${id}/history`);
    expect(queued.body.tasks.map((t: any) => t.status)).toEqual(["TASK_STATUS_QUEUED"]);

    // The worker finishes it: status only on tasks, usage on the session.
    await app.db
      .$executeRaw`UPDATE tasks SET status = 'COMPLETED', result = 'done', completed_at = now(), updated_at = now() WHERE id = ${taskId}::uuid`;
    await app.sessionChanged(id);
    const done = await eventually(
      () => get(alice, `/sessions/${id}/history`),
      (r) => r.body.tasks[0].status === "TASK_STATUS_COMPLETED",
      2_000,
    );
    expect(done.body.tasks[0]).toMatchObject({ status: "TASK_STATUS_COMPLETED", result: "done" });
  });

  it("marks a session before it caches anything of it: writers elsewhere hint only marked sessions", async () => {
    const marked = async (id: string) =>
      (await app.db.$queryRaw<{ v: boolean }[]>`SELECT views_cached AS v FROM sessions WHERE id = ${id}::uuid`)[0]!.v;
    const byId = await insertSession(app.db, alice.id);
    const ext = `marked-${randomUUID()}`;
    const byRef = await insertSession(app.db, alice.id, { externalId: ext });
    const listed = await insertSession(app.db, alice.id);
    expect([await marked(byId), await marked(byRef), await marked(listed)]).toEqual([false, false, false]);

    expect((await get(alice, `/sessions/${byId}`)).status).toBe(200);
    expect(await marked(byId)).toBe(true);
    expect(await app.redis.get(`sess:${byId}:meta`)).not.toBeNull();
    expect((await get(alice, `/sessions/${ext}/history`)).status).toBe(200);
    expect(await marked(byRef)).toBe(true);
    expect(await app.redis.get(`sess:${byRef}:history.json`)).not.toBeNull();
    // Lists are not cached: a listed session stays unmarked, and its changes cost no hint.
    expect((await get(alice, "/sessions?limit=100")).body.sessions.map((x: any) => x.session_id)).toContain(listed);
    expect(await marked(listed)).toBe(false);
  });

  it("a hit is answered from Redis without asking PostgreSQL", async () => {
    const id = await insertSession(app.db, alice.id);
    await get(alice, `/sessions/${id}`);
    const key = `sess:${id}:meta`;
    const entry = JSON.parse((await app.redis.get(key))!) as { s: string; v: Record<string, unknown> };
    await app.redis.set(key, JSON.stringify({ s: entry.s, v: { ...entry.v, title: "from the cache" } }));
    expect((await get(alice, `/sessions/${id}`)).body.title).toBe("from the cache");
    // Built under an older stamp: ignored.
    await app.redis.set(key, JSON.stringify({ s: "0:0", v: { ...entry.v, title: "stale" } }));
    expect((await get(alice, `/sessions/${id}`)).body.title).toBeNull();
  });

  it("a change drops every view of each session named, in one call, and nothing else", async () => {
    const a = await insertSession(app.db, alice.id);
    const b = await insertSession(app.db, alice.id);
    const c = await insertSession(app.db, alice.id);
    for (const id of [a, b, c]) {
      await get(alice, `/sessions/${id}`);
      await get(alice, `/sessions/${id}/history`);
    }
    const gen = async (id: string) => Number((await app.redis.get(`sess:${id}:gen`)) ?? 0);
    const before = { a: await gen(a), b: await gen(b), c: await gen(c) };
    expect(await app.redis.exists(`sess:${a}:meta`, `sess:${a}:history.json`, `sess:${b}:meta`)).toBe(3);

    await app.cache.invalidate(a, b);
    expect(
      await app.redis.exists(`sess:${a}:meta`, `sess:${a}:history.json`, `sess:${b}:meta`, `sess:${b}:history.json`),
    ).toBe(0);
    expect([await gen(a), await gen(b), await gen(c)]).toEqual([before.a + 1, before.b + 1, before.c]);
    // The generation outlives every entry written under it.
    expect(await app.redis.ttl(`sess:${a}:gen`)).toBeGreaterThan(await app.redis.ttl(`sess:${c}:meta`));
    // The third session's entry is still served: nothing else was made stale.
    const key = `sess:${c}:meta`;
    const entry = JSON.parse((await app.redis.get(key))!) as { s: string; v: Record<string, unknown> };
    await app.redis.set(key, JSON.stringify({ s: entry.s, v: { ...entry.v, title: "still cached" } }));
    expect((await get(alice, `/sessions/${c}`)).body.title).toBe("still cached");
  });

  it("a stale external-id mapping (session purged, id reused) is not trusted", async () => {
    const ext = `reused-${randomUUID()}`;
    const first = await insertSession(app.db, alice.id, { externalId: ext });
    expect((await get(alice, `/sessions/${ext}`)).body.session_id).toBe(first);
    await app.db.$executeRaw`DELETE FROM sessions WHERE id = ${first}::uuid`;
    const second = await insertSession(app.db, alice.id, { externalId: ext });
    const res = await eventually(
      () => get(alice, `/sessions/${ext}`),
      (r) => r.status === 200 && r.body.session_id === second,
      2_000,
    );
    expect(res.body.session_id).toBe(second);
  });

  it("external ids are per user: the same id names each user's own session", async () => {
    const ext = `shared-name-${randomUUID()}`;
    const mine = await insertSession(app.db, alice.id, { externalId: ext });
    const theirs = await insertSession(app.db, bob.id, { externalId: ext });
    expect(mine).not.toBe(theirs);
    expect((await get(alice, `/sessions/${ext}`)).body.session_id).toBe(mine);
    expect((await get(bob, `/sessions/${ext}`)).body.session_id).toBe(theirs);
  });
});

describe("cache, bodies", () => {
  // Without local copies (SESSION_CACHE_LOCAL_MB=0): every hit is what Redis holds.
  const plain = {} as { app: SessionApp; user: TestUser; get: (path: string) => ReturnType<typeof get> };
  // Local copies of at most 4 KiB in all, each kept 400 ms.
  const small = {} as typeof plain;
  beforeAll(async () => {
    for (const [target, options] of [
      [plain, { localBytes: 0 }],
      [small, { localBytes: 4_096, localMaxAgeMs: 400 }],
    ] as const) {
      target.app = await startSessionApp(options);
      target.user = await target.app.newUser("carol");
      target.get = (path) => call(target.app.base, "GET", `/api/v1${path}`, { key: target.user.key });
    }
  }, 60_000);
  afterAll(async () => {
    await plain.app?.close();
    await small.app?.close();
  });

  it("history and turn pages are kept as their response bodies and a hit is sent byte for byte", async () => {
    const id = await insertSession(plain.app.db, plain.user.id);
    await insertTask(plain.app.db, plain.user.id, id, {
      query: 'quoted "text" and ünïcode',
      events: completedRun("done"),
    });
    const views = [
      { path: `/sessions/${id}/history`, read: () => plain.app.redis.getBuffer(`sess:${id}:history.json`) },
      {
        path: `/sessions/${id}/events?limit=5`,
        read: () => plain.app.redis.hgetBuffer(`sess:${id}:turns.json`, "5:0:0"),
      },
    ];
    for (const view of views) {
      const built = await plain.get(view.path);
      expect(built.status).toBe(200);
      // What a route answering with res.json sends.
      expect(built.headers.get("content-type")).toBe("application/json; charset=utf-8");
      const entry = (await view.read())!;
      const newline = entry.indexOf(0x0a);
      const stamp = entry.toString("latin1", 0, newline);
      expect(stamp).toMatch(/^\d+:\d+$/);
      expect(entry.subarray(newline + 1).toString("utf8")).toBe(built.text);

      const hit = await plain.get(view.path);
      expect(hit.text).toBe(built.text);
      expect(hit.headers.get("content-type")).toBe("application/json; charset=utf-8");
      expect(Number(hit.headers.get("content-length"))).toBe(Buffer.byteLength(built.text));
    }

    // A hit is not parsed or rebuilt: an entry under the current stamp is what the client gets.
    const current = (await views[0]!.read())!;
    const stamp = current.toString("latin1", 0, current.indexOf(0x0a));
    await plain.app.redis.set(`sess:${id}:history.json`, `${stamp}\n{"from":"the cache"}`);
    expect((await plain.get(`/sessions/${id}/history`)).text).toBe('{"from":"the cache"}');
    // Under another stamp, or without one, it is ignored and rebuilt from PostgreSQL.
    for (const stale of [`0:0\n{"from":"the cache"}`, '{"s":"x","v":[]}']) {
      await plain.app.redis.set(`sess:${id}:history.json`, stale);
      const rebuilt = await plain.get(`/sessions/${id}/history`);
      expect(rebuilt.body.tasks.map((t: any) => t.query)).toEqual(['quoted "text" and ünïcode']);
    }
  });

  it("a body this process holds is sent while Redis says it is current, and Redis does not send it", async () => {
    const id = await insertSession(app.db, alice.id);
    const taskId = await insertTask(app.db, alice.id, id, { query: "first", events: completedRun("done") });
    const views = [
      { path: `/sessions/${id}/history`, key: `sess:${id}:history.json`, field: undefined },
      { path: `/sessions/${id}/events?limit=5`, key: `sess:${id}:turns.json`, field: "5:0:0" },
    ];
    const overwrite = async (key: string, field: string | undefined, text: string) => {
      if (field === undefined) await app.redis.set(key, text);
      else await app.redis.hset(key, field, text);
    };
    const read = async (key: string, field: string | undefined) =>
      (field === undefined ? await app.redis.getBuffer(key) : await app.redis.hgetBuffer(key, field))!;
    for (const view of views) {
      const built = await get(alice, view.path);
      const entry = await read(view.key, view.field);
      const stamp = entry.toString("latin1", 0, entry.indexOf(0x0a));
      // Redis's entry under the same stamp is not read: the copy taken when it was built is sent.
      await overwrite(view.key, view.field, `${stamp}\n{"from":"redis"}`);
      const hit = await get(alice, view.path);
      expect(hit.text).toBe(built.text);
      expect(Number(hit.headers.get("content-length"))).toBe(Buffer.byteLength(built.text));
    }

    // A change elsewhere moves the stamp: the copies are no longer sent.
    await app.db.$executeRaw`UPDATE tasks SET query = 'changed', updated_at = now() WHERE id = ${taskId}::uuid`;
    await app.sessionChanged(id);
    const changed = await eventually(
      () => get(alice, `/sessions/${id}/history`),
      (r) => r.body.tasks?.[0]?.query === "changed",
      2_000,
    );
    expect(changed.body.tasks[0].query).toBe("changed");
    expect((await get(alice, `/sessions/${id}/events?limit=5`)).body.turns[0].user_query).toBe("changed");

    // Redis lost its data and its epoch came back to a value a copy carries: once this process
    // has seen another epoch in between (here by reading the session's metadata), the copy is
    // not sent.
    const current = await get(alice, `/sessions/${id}/history`);
    const entry = await read(views[0]!.key, undefined);
    const heldStamp = entry.toString("latin1", 0, entry.indexOf(0x0a));
    const epoch = (await app.redis.get("sess:epoch"))!;
    await app.redis.set("sess:epoch", "999999");
    expect((await get(alice, `/sessions/${id}`)).status).toBe(200);
    await app.redis.set("sess:epoch", epoch);
    await overwrite(views[0]!.key, undefined, `${heldStamp}\n{"from":"redis"}`);
    expect(current.body.tasks[0].query).toBe("changed");
    expect((await get(alice, `/sessions/${id}/history`)).text).toBe('{"from":"redis"}');
  });

  it("a copy lives at most its age and within the byte budget; past either, Redis's entry is sent", async () => {
    const { app: a, user, get: read } = small;
    const short = await insertSession(a.db, user.id);
    await insertTask(a.db, user.id, short, { query: "short" });
    const built = await read(`/sessions/${short}/history`);
    expect(built.text.length).toBeLessThan(4_096);
    const key = `sess:${short}:history.json`;
    const entry = (await a.redis.getBuffer(key))!;
    const stamp = entry.toString("latin1", 0, entry.indexOf(0x0a));
    await a.redis.set(key, `${stamp}\n{"from":"redis"}`);
    expect((await read(`/sessions/${short}/history`)).text).toBe(built.text);
    await new Promise((r) => setTimeout(r, 450));
    expect((await read(`/sessions/${short}/history`)).text).toBe('{"from":"redis"}');

    // Larger than the whole budget: never kept.
    const long = await insertSession(a.db, user.id);
    for (let i = 0; i < 12; i++) await insertTask(a.db, user.id, long, { query: `turn ${i} ${"x".repeat(200)}` });
    const big = await read(`/sessions/${long}/history`);
    expect(big.text.length).toBeGreaterThan(4_096);
    const bigEntry = (await a.redis.getBuffer(`sess:${long}:history.json`))!;
    const bigStamp = bigEntry.toString("latin1", 0, bigEntry.indexOf(0x0a));
    await a.redis.set(`sess:${long}:history.json`, `${bigStamp}\n{"from":"redis"}`);
    expect((await read(`/sessions/${long}/history`)).text).toBe('{"from":"redis"}');
  });
});

describe("retention", () => {
  it("purges sessions idle for longer than the retention with their tasks, steps and events; keeps busy and recent ones", async () => {
    const user = await app.newUser("retention");
    const old = new Date(Date.now() - 31 * 86_400_000);
    const idle = await insertSession(app.db, user.id, { lastActivityAt: old, externalId: `idle-${randomUUID()}` });
    const idleTask = await insertTask(app.db, user.id, idle, { createdAt: old, events: completedRun("x") });
    const deleted = await insertSession(app.db, user.id, { lastActivityAt: old });
    await app.db
      .$executeRaw`UPDATE sessions SET deleted_at = now(), deleted_by = ${user.id}::uuid, last_activity_at = ${old} WHERE id = ${deleted}::uuid`;
    const busy = await insertSession(app.db, user.id, { lastActivityAt: old });
    await insertTask(app.db, user.id, busy, { status: "RUNNING", createdAt: old });
    const recent = await insertSession(app.db, user.id, { lastActivityAt: new Date(Date.now() - 29 * 86_400_000) });
    expect((await get(user, `/sessions/${idle}`)).status).toBe(200);

    const purged: string[] = [];
    const job = startSessionRetention({
      db: app.db,
      logger,
      retentionDays: 30,
      batchSize: 1,
      initialDelayMs: 3_600_000,
      onPurged: async (ids) => {
        purged.push(...ids);
        for (const id of ids) await app.cache.invalidate(id);
      },
    });
    try {
      const result = await job.runOnce();
      expect(result).toMatchObject({ ran: true, sessions: 2, tasks: 1, events: 8 });
    } finally {
      await job.stop();
    }
    expect(purged.sort()).toEqual([idle, deleted].sort());
    const left = await app.db.$queryRaw<
      { id: string }[]
    >`SELECT id::text FROM sessions WHERE user_id = ${user.id}::uuid ORDER BY id`;
    expect(left.map((r) => r.id).sort()).toEqual([busy, recent].sort());
    const [events, steps, tasks] = await Promise.all([
      app.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM task_events WHERE task_id = ${idleTask}::uuid`,
      app.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM task_steps WHERE task_id = ${idleTask}::uuid`,
      app.db.$queryRaw<{ n: bigint }[]>`SELECT count(*) AS n FROM tasks WHERE id = ${idleTask}::uuid`,
    ]);
    expect([events[0]!.n, steps[0]!.n, tasks[0]!.n]).toEqual([0n, 0n, 0n]);
    expect((await get(user, `/sessions/${idle}`)).status).toBe(404);
  });

  it("0 days keeps everything", async () => {
    const job = startSessionRetention({ db: app.db, logger, retentionDays: 0 });
    expect(await job.runOnce()).toEqual({ ran: false, sessions: 0, tasks: 0, events: 0 });
    await job.stop();
  });
});
