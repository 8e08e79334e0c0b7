// Sessions end to end: the session service as its own process behind the router
// (/api/v1/sessions*), tasks through the gateway, orchestrator and workers, real PostgreSQL and
// Redis, auth on.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import {
  allEvents,
  get,
  post,
  submit,
  waitForEvent,
  waitForStatus,
  newClient,
  type Client,
  type Json,
} from "../tasks/support.ts";
import { deleteSession, eventually, firstPrompt, patchTitle, session, turn } from "./support.ts";

let env: E2eEnvironment;
let alice: Client;
let bob: Client;

const SUMMARY = "Summary of earlier messages of this conversation";

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RUN_ACK_WAIT_SECONDS: "2", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    // Every tool call needs an approval here, so a denied one ends a task without a result.
    services: { worker: { TOOL_APPROVAL_THRESHOLD: "low", APPROVAL_TIMEOUT_SECONDS: "30" } },
    only: ["gateway", "session", "orchestrator", "worker"],
  });
  alice = await newClient(env, "alice");
  bob = await newClient(env, "bob");
}, 120_000);
afterAll(async () => {
  await env?.close();
});

describe("a conversation", () => {
  const ext = `trip-${randomUUID()}`;
  let uuid: string;
  let first: Json;
  let second: Json;

  beforeAll(async () => {
    first = (
      await turn(alice, {
        query: "My name is Ada and I am planning a trip to Lisbon.",
        session_id: ext,
        mode: "simple",
      })
    ).task;
    second = (await turn(alice, { query: "Where am I travelling to?", session_id: ext, mode: "simple" })).task;
    uuid = first.session_id as string;
  }, 60_000);

  it("the second task's model input holds the first turn", async () => {
    expect(first.status).toBe("TASK_STATUS_COMPLETED");
    expect(second.status).toBe("TASK_STATUS_COMPLETED");
    expect(second.session_id).toBe(uuid);
    const prompt = await firstPrompt(alice, second.task_id);
    expect(prompt).toContain("[user] My name is Ada and I am planning a trip to Lisbon.");
    expect(prompt).toContain(`[assistant] ${first.result}`);
    expect(prompt.indexOf("planning a trip")).toBeLessThan(prompt.indexOf("Where am I travelling to?"));
    const loaded = (await allEvents(alice, second.task_id)).find((e) => e.type === "DATA_PROCESSING");
    expect(loaded?.data).toMatchObject({ operation: "load_session_history", records_processed: 2 });
    expect(await firstPrompt(alice, first.task_id)).not.toContain("[assistant]");
  });

  it("every endpoint and the task list's filter accept both id forms", async () => {
    for (const ref of [uuid, uuid.toUpperCase(), ext]) {
      const detail = await session(alice, ref);
      expect(detail.status, ref).toBe(200);
      expect(detail.body).toMatchObject({
        session_id: uuid,
        user_id: expect.any(String),
        external_id: ext,
        task_count: 2,
        tokens_used: first.usage.total_tokens + second.usage.total_tokens,
        token_budget: 1_000_000,
        context: { external_id: ext },
      });
      const history = await session(alice, ref, "/history");
      expect(history.status).toBe(200);
      expect(history.body.tasks.map((t: Json) => t.task_id)).toEqual([first.task_id, second.task_id]);
      const turns = await session(alice, ref, "/events");
      expect(turns.status).toBe(200);
      expect(turns.body.turns.map((t: Json) => t.task_id)).toEqual([first.task_id, second.task_id]);
      const renamed = await patchTitle(alice, ref, `Lisbon via ${ref.slice(0, 8)}`);
      expect(renamed.status).toBe(200);
      expect(renamed.body).toMatchObject({ session_id: uuid, title: `Lisbon via ${ref.slice(0, 8)}` });
      const tasks = await get(alice, `/tasks?session_id=${encodeURIComponent(ref)}`);
      expect(tasks.body.total_count).toBe(2);
    }
    const listed = (await get(alice, "/sessions?limit=100")).body.sessions.find((s: Json) => s.session_id === uuid);
    expect(listed).toMatchObject({
      session_id: uuid,
      external_id: ext,
      title: `Lisbon via ${ext.slice(0, 8)}`,
      task_count: 2,
      token_budget: 1_000_000,
    });
    expect(listed).toHaveProperty("last_activity_at");
  });

  it("history carries each task's execution details in the API's status and mode values", async () => {
    const history = (await session(alice, ext, "/history")).body;
    expect(history).toMatchObject({ session_id: uuid, total: 2 });
    expect(history.tasks[0]).toMatchObject({
      task_id: first.task_id,
      workflow_id: first.task_id,
      query: first.query,
      status: "TASK_STATUS_COMPLETED",
      mode: "EXECUTION_MODE_SIMPLE",
      result: first.result,
      error_message: "",
      model_used: first.model_used,
      provider: "offline",
      total_tokens: first.usage.total_tokens,
      agents_used: 1,
      tools_invoked: 0,
    });
    expect(history.tasks[0].duration_ms).toBeGreaterThanOrEqual(0);
    expect(history.tasks[0].completed_at).toEqual(expect.any(String));
  });

  it("another user gets 403 by UUID (404 on the events endpoint), 404 by external id (per user), and cannot join the session", async () => {
    expect((await session(bob, uuid)).status).toBe(403);
    expect((await session(bob, uuid, "/history")).status).toBe(403);
    expect((await session(bob, uuid, "/events")).status).toBe(404);
    expect((await patchTitle(bob, uuid, "mine now")).status).toBe(403);
    expect((await deleteSession(bob, uuid)).status).toBe(403);
    expect((await session(bob, uuid)).body).toEqual({ error: "Forbidden" });
    // External ids are scoped per user (docs/security.md): alice's id names nothing of bob's.
    for (const path of ["", "/history", "/events"])
      expect((await session(bob, ext, path)).body).toEqual({ error: "Session not found" });
    expect((await get(bob, "/sessions")).body.sessions.map((s: Json) => s.session_id)).not.toContain(uuid);
    expect((await submit(bob, { query: "hi", session_id: uuid })).status).toBe(403);
    // the same external id gives bob a session of his own, not alice's
    const own = await submit(bob, { query: "hi", session_id: ext });
    expect(own.status).toBe(200);
    expect((await session(bob, ext)).body.session_id).not.toBe(uuid);
    expect((await session(alice, ext)).body.task_count).toBe(2);
  });

  it("the cache follows changes made by other services: a new task shows at once", async () => {
    expect((await session(alice, ext)).body.task_count).toBe(2); // cached
    const third = await submit(alice, { query: "And what is my name?", session_id: ext, mode: "simple" });
    const counted = await eventually(
      () => session(alice, ext),
      (r) => r.body.task_count === 3,
      2_000,
    );
    expect(counted.body.task_count).toBe(3);
    const done = await waitForStatus(alice, third.body.task_id);
    const history = await eventually(
      () => session(alice, uuid, "/history"),
      (r) => r.body.tasks[2]?.status === "TASK_STATUS_COMPLETED",
      2_000,
    );
    expect(history.body.tasks[2]).toMatchObject({
      task_id: done.task_id,
      status: "TASK_STATUS_COMPLETED",
      result: done.result,
    });
    expect(await firstPrompt(alice, done.task_id)).toContain("[user] Where am I travelling to?");
  });
});

describe("turns", () => {
  it("numbers turns globally across pages, leaves out LLM_PARTIAL and falls back to the first LLM_OUTPUT", async () => {
    const ext = `turns-${randomUUID()}`;
    const tasks: Json[] = [];
    for (const q of ["Say hello", "Say goodbye", "Say thanks"])
      tasks.push((await turn(alice, { query: q, session_id: ext, mode: "simple" })).task);
    // A tool call that is denied: the task fails without a result after its first model output.
    const denied = await submit(alice, { query: "What is 12*(3+4)?", session_id: ext, mode: "standard" });
    const requested = await waitForEvent(alice, denied.body.task_id, "APPROVAL_REQUESTED");
    await post(alice, "/approvals/decision", {
      workflow_id: denied.body.task_id,
      approval_id: requested.data.approval_id,
      approved: false,
    });
    const failed = await waitForStatus(alice, denied.body.task_id);
    expect(failed.status).toBe("TASK_STATUS_FAILED");
    expect(failed).not.toHaveProperty("result");

    const page1 = await eventually(
      () => session(alice, ext, "/events?limit=2"),
      (r) => r.status === 200,
    );
    expect(page1.body).toMatchObject({ count: 2, total_count: 4, limit: 2, offset: 0 });
    expect(page1.body.turns.map((t: Json) => [t.turn, t.task_id])).toEqual([
      [1, tasks[0]!.task_id],
      [2, tasks[1]!.task_id],
    ]);
    const page2 = (await session(alice, ext, "/events?limit=2&offset=2")).body;
    expect(page2).toMatchObject({ count: 2, total_count: 4, offset: 2 });
    expect(page2.turns.map((t: Json) => [t.turn, t.task_id])).toEqual([
      [3, tasks[2]!.task_id],
      [4, failed.task_id],
    ]);
    expect((await session(alice, ext, "/events?offset=4")).body).toMatchObject({ count: 0, total_count: 4, turns: [] });

    const t1 = page1.body.turns[0];
    expect(t1).toMatchObject({
      user_query: "Say hello",
      final_output: tasks[0]!.result,
      status: "TASK_STATUS_COMPLETED",
      timestamp: tasks[0]!.created_at,
    });
    expect(t1.metadata).toMatchObject({ tokens_used: tasks[0]!.usage.total_tokens, agents_involved: ["generalist"] });
    const stored = await allEvents(alice, tasks[0]!.task_id);
    expect(stored.map((e) => e.type)).toContain("LLM_PARTIAL");
    expect(t1.events.map((e: Json) => e.seq)).toEqual(stored.filter((e) => e.type !== "LLM_PARTIAL").map((e) => e.seq));
    expect(t1.events[0]).toEqual({
      workflow_id: tasks[0]!.task_id,
      type: "WORKFLOW_STARTED",
      agent_id: "orchestrator",
      message: stored[0]!.message,
      timestamp: stored[0]!.timestamp,
      seq: 1,
    });
    for (const t of [...page1.body.turns, ...page2.turns])
      expect(t.events.some((e: Json) => e.type === "LLM_PARTIAL")).toBe(false);

    const fallback = page2.turns[1];
    const firstOutput = (await allEvents(alice, failed.task_id)).find((e) => e.type === "LLM_OUTPUT")!;
    expect(fallback.final_output).toBe(firstOutput.data.output);
    expect(fallback.final_output).toContain("calculator");
    expect(fallback.status).toBe("TASK_STATUS_FAILED");

    for (const q of ["limit=0", "limit=101", "offset=-1", "limit=x"])
      expect((await session(alice, ext, `/events?${q}`)).status, q).toBe(400);
  });
});

describe("titles", () => {
  it("cleans titles and counts Unicode characters at the 60-character edge", async () => {
    const { sessionRef } = await turn(alice, { query: "Say hello", mode: "simple" });
    const cases: Array<[unknown, number, string | undefined]> = [
      [`${"日本語のタイトル".repeat(7)}日本語の`, 200, `${"日本語のタイトル".repeat(7)}日本語の`],
      ["😀".repeat(60), 200, "😀".repeat(60)],
      ["😀".repeat(61), 400, undefined],
      ["é".repeat(61), 400, undefined],
      [`\t  ${"👩\u200D💻".repeat(20)}\u200B\u0007  \n`, 200, "👩\u200D💻".repeat(20)],
      ["Line\none\u0007\u200Btwo", 200, "Line onetwo"],
      // NUL is refused before any handler, like in every string (docs/security.md)
      ["Line\none\u0000two", 400, undefined],
      ["  \u200B\u200D\n ", 400, undefined],
      ["", 400, undefined],
      [42, 400, undefined],
    ];
    let current: string | null = null;
    for (const [title, status, stored] of cases) {
      const res = await patchTitle(alice, sessionRef, title);
      expect(res.status, JSON.stringify(title)).toBe(status);
      if (status === 200) {
        expect(res.body.title).toBe(stored);
        current = stored!;
      } else {
        expect(res.body.error).toEqual(expect.any(String));
      }
      expect((await session(alice, sessionRef)).body.title).toBe(current);
    }
    expect((await patchTitle(alice, sessionRef, "😀".repeat(61))).body).toEqual({
      error: "title must be at most 60 characters (got 61)",
    });
  });
});

describe("deleting", () => {
  it("soft-deletes by either id form: 204, 204 again, then 404 on every read, out of lists, closed to new tasks", async () => {
    const ext = `gone-${randomUUID()}`;
    const a = await turn(alice, { query: "Say hello", session_id: ext, mode: "simple" });
    const b = await turn(alice, { query: "Say hello", mode: "simple" });
    for (const [ref, uuid] of [
      [ext, a.task.session_id as string],
      [b.sessionRef, b.task.session_id as string],
    ] as const) {
      expect((await session(alice, ref)).status).toBe(200);
      const del = await deleteSession(alice, ref);
      expect(del.status).toBe(204);
      expect(del.text).toBe("");
      expect((await deleteSession(alice, ref)).status).toBe(204);
      expect((await deleteSession(alice, uuid)).status).toBe(204);
      for (const r of [ref, uuid]) {
        for (const suffix of ["", "/history", "/events"]) {
          const res = await session(alice, r, suffix);
          expect(res.status, `${r}${suffix}`).toBe(404);
          expect(res.body).toEqual({ error: "Session not found" });
        }
        expect((await patchTitle(alice, r, "too late")).status).toBe(404);
      }
      expect((await get(alice, "/sessions?limit=100")).body.sessions.map((s: Json) => s.session_id)).not.toContain(
        uuid,
      );
      const again = await submit(alice, { query: "hello?", session_id: ref });
      expect(again.status).toBe(404);
      expect(again.body).toEqual({ error: "Session not found" });
    }
    // Data retained: the tasks themselves are still readable.
    expect((await get(alice, `/tasks/${a.task.task_id}`)).status).toBe(200);
    expect((await deleteSession(alice, `never-${randomUUID()}`)).status).toBe(404);
  });
});

describe("lists", () => {
  it("pages sessions newest activity first and refuses out-of-range paging", async () => {
    const carol: Client = {
      baseUrl: env.baseUrl,
      key: (await env.createApiKey({ user: "carol@example.com", createUser: true, name: "carol" })).key,
    };
    const refs: string[] = [];
    for (let i = 0; i < 3; i++) refs.push((await turn(carol, { query: `Say ${i}`, mode: "simple" })).sessionRef);
    const page = await get(carol, "/sessions?limit=2");
    expect(page.status).toBe(200);
    expect(page.body.total_count).toBe(3);
    expect(page.body.sessions.map((s: Json) => s.session_id)).toEqual([refs[2], refs[1]]);
    expect(page.body.sessions[0]).toEqual({
      session_id: refs[2],
      user_id: expect.any(String),
      external_id: null,
      title: null,
      task_count: 1,
      tokens_used: expect.any(Number),
      token_budget: 1_000_000,
      total_cost_usd: 0,
      created_at: expect.any(String),
      updated_at: expect.any(String),
      last_activity_at: expect.any(String),
    });
    expect((await get(carol, "/sessions?limit=2&offset=2")).body.sessions.map((s: Json) => s.session_id)).toEqual([
      refs[0],
    ]);
    for (const [q, error] of [
      ["limit=0", "Invalid limit parameter: must be an integer from 1 to 100"],
      ["limit=101", "Invalid limit parameter: must be an integer from 1 to 100"],
      ["offset=-3", "Invalid offset parameter: must be an integer from 0 to 2147483647"],
    ]) {
      const res = await get(carol, `/sessions?${q}`);
      expect(res.status).toBe(400);
      expect(res.body).toEqual({ error });
    }
  });
});

describe("memory compression", () => {
  it("kicks in when the history passes the trigger ratio of the model's context window", async () => {
    // offline-small has 128,000 tokens: trigger 0.002 → 256 tokens, target 0.001 → 128 tokens.
    const context = {
      compression_trigger_ratio: 0.002,
      compression_target_ratio: 0.001,
      primers_count: 1,
      recents_count: 1,
    };
    const ext = `long-${randomUUID()}`;
    await turn(alice, {
      query: `Remember these words: ${"alpha ".repeat(60)}`,
      session_id: ext,
      mode: "simple",
      context,
    });
    const second = (
      await turn(alice, { query: `And these: ${"beta ".repeat(60)}`, session_id: ext, mode: "simple", context })
    ).task;
    const third = (
      await turn(alice, { query: "Which words did I give you?", session_id: ext, mode: "simple", context })
    ).task;
    const compressed = await firstPrompt(alice, third.task_id);
    expect(compressed).toContain("[user] Remember these words: alpha");
    expect(compressed).toContain(`[user] ${SUMMARY} (2 messages`);
    expect(compressed).toContain(`[assistant] ${(second.result as string).slice(0, 40)}`);
    expect(compressed).not.toContain("[user] And these: beta");

    // The same history under a trigger it does not pass: sent as it is.
    const fourth = (
      await turn(alice, {
        query: "Again?",
        session_id: ext,
        mode: "simple",
        context: { ...context, compression_trigger_ratio: 0.05 },
      })
    ).task;
    const plain = await firstPrompt(alice, fourth.task_id);
    expect(plain).not.toContain(SUMMARY);
    expect(plain).toContain("[user] And these: beta");
  });

  it("refuses an unknown use_case_preset at submit", async () => {
    const res = await submit(alice, { query: "hi", context: { use_case_preset: "gossip" } });
    expect(res.status).toBe(400);
    expect(res.body).toEqual({
      error: 'Invalid use_case_preset: "gossip" (allowed: default, chat, support, analysis)',
    });
    expect((await submit(alice, { query: "hi", mode: "simple", context: { use_case_preset: "chat" } })).status).toBe(
      200,
    );
  });
});

describe("the session service process", () => {
  it("listened for changes and logged no warnings or errors", async () => {
    const logs = env.logs("session");
    expect(logs.some((l) => l.msg === "listening for session changes")).toBe(true);
    expect(logs.filter((l) => (l.level as number) >= 40).map((l) => l.msg)).toEqual([]);
  });
});
