// Conversation memory and the session token budget in the real runtime: PostgreSQL, JetStream,
// the real task flow on the offline provider, wired as worker.ts wires them.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadCatalog } from "@tog/catalog";
import { createLlmRouter } from "@tog/providers";
import { taskFlow } from "../../src/flows/index.ts";
import { budgetedRouter, SessionBudgets } from "../../src/sessions/session-budget.ts";
import { contextWindowOf, sessionContextLoader } from "../../src/sessions/session-context.ts";
import { SessionMemory } from "../../src/sessions/session-memory.ts";
import { SUMMARY_HEADER } from "../../src/sessions/history-shaping.ts";
import { logger, startRuntimeHarness, submitCommand, type RuntimeHarness } from "../runtime/harness.ts";

let h: RuntimeHarness;
let memory: SessionMemory;
let budgets: SessionBudgets;

beforeAll(async () => {
  h = await startRuntimeHarness("sessions");
  const catalog = loadCatalog();
  const llm = createLlmRouter({ catalog, apiKeys: {}, logger });
  budgets = new SessionBudgets({ pool: h.pool });
  memory = new SessionMemory({ pool: h.pool, contextWindow: contextWindowOf(llm, catalog) });
  await h.startWorker(taskFlow, {
    loadSessionHistory: sessionContextLoader({ memory, budgets }),
    routerFor: (task, router) => budgetedRouter(router, budgets, task),
  });
}, 60_000);
afterAll(async () => {
  await h?.close();
});

async function run(
  query: string,
  options: { sessionId?: string; mode?: "simple" | "standard"; context?: Record<string, unknown> } = {},
) {
  const submitted = await h.service.submitTask({
    ...submitCommand(h.userId, query, options),
    mode: options.mode ?? "simple",
  });
  await h.waitForStatus(submitted.taskId, ["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"]);
  const task = await h.service.getTask(h.userId, submitted.taskId);
  return { task, sessionId: submitted.sessionId, events: await h.events(submitted.taskId) };
}

async function newSession(budget: number, used = 0): Promise<string> {
  const id = randomUUID();
  await h.db
    .$executeRaw`INSERT INTO sessions (id, user_id, token_budget, tokens_used) VALUES (${id}::uuid, ${h.userId}::uuid, ${budget}, ${used})`;
  return id;
}

/** The contract's default window controls. */
const WINDOW = {
  historyWindowSize: 50,
  primersCount: 5,
  recentsCount: 15,
  compressionTriggerRatio: 0.8,
  compressionTargetRatio: 0.5,
};

/** The harness's pool, noting the name (or text) of every named statement sent through it. */
function countingPool(seen: string[], by: "name" | "text" = "name"): typeof h.pool {
  return {
    query: (config: { name: string; text: string; values: unknown[] }) => {
      seen.push(config[by]);
      return h.pool.query(config);
    },
  } as unknown as typeof h.pool;
}

/** A worker's session loader on a counting pool: the named statements it sends land in `statements`. */
function countedLoader() {
  const statements: string[] = [];
  const pool = countingPool(statements);
  const counted = new SessionBudgets({ pool });
  const load = sessionContextLoader({
    memory: new SessionMemory({ pool, contextWindow: () => 100_000 }),
    budgets: counted,
  });
  return { statements, counted, load };
}

describe("conversation memory", () => {
  it("the second turn's model input holds the first turn", async () => {
    const first = await run("My name is Ada and I like graphs.");
    expect(first.task.status).toBe("COMPLETED");
    expect(first.events.find((e) => e.type === "DATA_PROCESSING")).toBeUndefined();

    const second = await run("What is my name?", { sessionId: first.sessionId });
    expect(second.task.status).toBe("COMPLETED");
    const loaded = second.events.find((e) => e.type === "DATA_PROCESSING");
    expect(loaded?.data).toMatchObject({ operation: "load_session_history", records_processed: 2 });
    const prompt = second.events.find((e) => e.type === "LLM_PROMPT")!.data.sanitized_prompt as string;
    expect(prompt).toContain("[user] My name is Ada and I like graphs.");
    expect(prompt).toContain(`[assistant] ${first.task.result}`);
    expect(prompt.indexOf("My name is Ada")).toBeLessThan(prompt.indexOf("What is my name?"));
  });

  it("compresses the history once it passes the trigger ratio of the model's context window", async () => {
    // offline-small: 128,000 tokens. Trigger 0.002 → 256 tokens; target 0.001 → 128 tokens.
    const context = {
      compression_trigger_ratio: 0.002,
      compression_target_ratio: 0.001,
      primers_count: 1,
      recents_count: 1,
    };
    const a = await run(`First: ${"alpha ".repeat(60)}`, { context });
    const b = await run(`Second: ${"beta ".repeat(60)}`, { sessionId: a.sessionId, context });
    // Two turns of ~90 + ~120 tokens each: above 256 → compressed to primer + summary + recent.
    const c = await run("Third question", { sessionId: a.sessionId, context });
    expect(c.task.status).toBe("COMPLETED");
    expect(c.events.find((e) => e.type === "DATA_PROCESSING")?.data.records_processed).toBe(3);
    const prompt = c.events.find((e) => e.type === "LLM_PROMPT")!.data.sanitized_prompt as string;
    expect(prompt).toContain("[user] First: alpha");
    expect(prompt).toContain(`[user] ${SUMMARY_HEADER} (2 messages`);
    expect(prompt).toContain(`[assistant] ${b.task.result!.slice(0, 40)}`);

    // The same session below the trigger: no summary.
    const d = await run("Fourth question", {
      sessionId: a.sessionId,
      context: { ...context, compression_trigger_ratio: 0.5 },
    });
    const plain = d.events.find((e) => e.type === "LLM_PROMPT")!.data.sanitized_prompt as string;
    expect(plain).not.toContain(SUMMARY_HEADER);
    expect(d.events.find((e) => e.type === "DATA_PROCESSING")?.data.records_processed).toBe(6);
  });

  it("loads only earlier COMPLETED turns of the same session, oldest first, head and tail of a long session", async () => {
    const sessionId = await newSession(1_000_000);
    const other = await newSession(1_000_000);
    const at = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s));
    const insert = async (session: string, i: number, status: string, result: string | null) => {
      const id = randomUUID();
      await h.db.$executeRaw`
        INSERT INTO tasks (id, user_id, session_id, query, status, spec, result, trace_id, created_at)
        VALUES (${id}::uuid, ${h.userId}::uuid, ${session}::uuid, ${`q${i}`}, ${status}, '{}'::jsonb, ${result}, ${"0".repeat(32)}, ${at(i)})`;
      return id;
    };
    for (let i = 1; i <= 12; i++) await insert(sessionId, i, i === 3 ? "FAILED" : "COMPLETED", i === 4 ? "" : `r${i}`);
    await insert(other, 5, "COMPLETED", "other");
    const current = await insert(sessionId, 13, "RUNNING", null);
    await insert(sessionId, 14, "COMPLETED", "later");

    const spec = (window: Record<string, unknown>) => ({ window: { ...WINDOW, ...window } }) as never;
    const all = await memory.load({ id: current, sessionId, createdAt: at(13), spec: spec({}) });
    expect(all.messages.map((m) => m.content)).toEqual(
      [1, 2, 5, 6, 7, 8, 9, 10, 11, 12].flatMap((i) => [`q${i}`, `r${i}`]),
    );
    expect(all.messages.map((m) => m.role).slice(0, 2)).toEqual(["user", "assistant"]);

    // A window of 6 with 2 primers: the first turn, then the last two turns.
    const windowed = await memory.load({
      id: current,
      sessionId,
      createdAt: at(13),
      spec: spec({ historyWindowSize: 6, primersCount: 2 }),
    });
    expect(windowed.messages.map((m) => m.content)).toEqual(["q1", "r1", "q11", "r11", "q12", "r12"]);
    // Head and tail do not meet: the turns between them are never read, not even counted, so the
    // logged figures are lower bounds (the 8 messages fetched), the window's content is exact.
    expect(windowed).toMatchObject({ available: 8, omitted: 2 });

    // Head, tail and the session's budget come in one statement: a long session costs no more
    // round trips than a new one, and the budget check reads nothing more.
    const statements: string[] = [];
    const counted = new SessionMemory({ pool: countingPool(statements, "text"), contextWindow: () => 100_000 });
    const again = await counted.load({
      id: current,
      sessionId,
      createdAt: at(13),
      spec: spec({ historyWindowSize: 6, primersCount: 2 }),
    });
    expect(again.messages).toEqual(windowed.messages);
    expect(statements).toHaveLength(1);
    const both = await counted.loadWithBudget({
      id: current,
      sessionId,
      createdAt: at(13),
      spec: spec({ historyWindowSize: 6, primersCount: 2 }),
    });
    expect(both.history.messages).toEqual(windowed.messages);
    expect(both.budget).toEqual({ budget: 1_000_000, used: 0 });
    expect(statements).toHaveLength(2);
  });
});

describe("run context reads", () => {
  it("runs that load their sessions at the same time share one statement, each gets its own", async () => {
    const sessions = await Promise.all([newSession(100, 1), newSession(200, 2), newSession(300, 3)]);
    const at = new Date(Date.UTC(2026, 0, 2));
    // Session i holds i + 1 earlier turns; a fourth session id does not exist.
    for (const [i, sessionId] of sessions.entries())
      for (let k = 0; k <= i; k++)
        await h.db.$executeRaw`
          INSERT INTO tasks (id, user_id, session_id, query, status, spec, result, trace_id, created_at)
          VALUES (${randomUUID()}::uuid, ${h.userId}::uuid, ${sessionId}::uuid, ${`s${i}q${k}`}, 'COMPLETED', '{}'::jsonb,
                  ${`s${i}r${k}`}, ${"0".repeat(32)}, ${new Date(at.getTime() - 1_000 * (10 - k))})`;
    const names: string[] = [];
    const memory = new SessionMemory({ pool: countingPool(names), contextWindow: () => 100_000 });
    const task = (sessionId: string) => ({
      id: randomUUID(),
      sessionId,
      createdAt: at,
      spec: { window: WINDOW } as never,
    });
    // Asked in the same tick: one statement for all five.
    const loads = [...sessions, randomUUID(), sessions[1]!].map((id) => memory.loadWithBudget(task(id)));
    const results = await Promise.all(loads);
    expect(names).toEqual(["run-contexts"]);
    expect(results.map((r) => r.budget)).toEqual([
      { budget: 100, used: 1 },
      { budget: 200, used: 2 },
      { budget: 300, used: 3 },
      null,
      { budget: 200, used: 2 },
    ]);
    expect(results.map((r) => r.history.messages.map((m) => m.content))).toEqual([
      ["s0q0", "s0r0"],
      ["s1q0", "s1r0", "s1q1", "s1r1"],
      ["s2q0", "s2r0", "s2q1", "s2r1", "s2q2", "s2r2"],
      [],
      ["s1q0", "s1r0", "s1q1", "s1r1"],
    ]);
  });
});

describe("session token budget", () => {
  it("a session whose budget is used up fails the next task with BUDGET_EXCEEDED right after WORKFLOW_STARTED", async () => {
    const sessionId = await newSession(1_000, 1_000);
    const { task, events } = await run("Say hello", { sessionId });
    expect(task).toMatchObject({
      status: "FAILED",
      errorType: "BUDGET_EXCEEDED",
      error: "Session token budget exceeded: 1000 of 1000 tokens used",
    });
    expect(events.map((e) => e.type)).toEqual(["WORKFLOW_STARTED", "ERROR_OCCURRED"]);
    expect(events[1]!.data).toMatchObject({
      error_type: "BUDGET_EXCEEDED",
      terminal: true,
      status: "FAILED",
      recoverable: false,
    });
  });

  it("a model call whose input does not fit what is left is not made", async () => {
    // The prompt (~3 tokens) fits 20 tokens; the first call with its system prompt does not.
    const sessionId = await newSession(20);
    const { task, events } = await run("Say hello", { sessionId });
    expect(task.status).toBe("FAILED");
    expect(task.errorType).toBe("BUDGET_EXCEEDED");
    expect(task.error).toMatch(/^Session token budget exceeded: this step needs about \d+ tokens, 20 of 20 are left$/);
    const types = events.map((e) => e.type);
    expect(types).not.toContain("LLM_OUTPUT");
    expect(events.find((e) => e.type === "AGENT_FAILED")?.data).toMatchObject({ error: "BUDGET_EXCEEDED" });
    expect(events.at(-1)!.data).toMatchObject({ error_type: "BUDGET_EXCEEDED", terminal: true });
  });

  it("a task within budget completes and counts; once the budget is passed the next one fails", async () => {
    const sessionId = await newSession(400);
    const first = await run("Say hello", { sessionId });
    expect(first.task.status).toBe("COMPLETED");
    const used = (await budgets.state({ id: randomUUID(), sessionId }))!.used;
    expect(used).toBe(first.task.usage!.totalTokens);
    expect(used).toBeGreaterThan(0);
    // Spend the rest the way other tasks would have.
    await h.db.$executeRaw`UPDATE sessions SET tokens_used = token_budget WHERE id = ${sessionId}::uuid`;
    const second = await run("Say hello again", { sessionId });
    expect(second.task.errorType).toBe("BUDGET_EXCEEDED");
  });

  it("the history step and the first model call cost one statement; a purged session costs nothing", async () => {
    const sessionId = await newSession(400);
    const first = await run("Say hello", { sessionId });
    const { statements, counted, load } = countedLoader();
    const task = {
      ...(first.task as unknown as Record<string, unknown>),
      id: randomUUID(),
      sessionId,
      createdAt: new Date(),
      spec: { query: "Next", window: WINDOW },
    } as never;
    const messages = await load(task);
    expect(messages.map((m) => m.content)).toEqual(["Say hello", first.task.result]);
    // The first model call's check reuses what the history step read.
    expect(await counted.state(task)).toEqual({ budget: 400, used: first.task.usage!.totalTokens });
    expect(statements).toEqual(["run-contexts"]);
    // Another task reads afresh.
    await counted.state({ id: randomUUID(), sessionId });
    expect(statements).toEqual(["run-contexts", "session-budget"]);

    // The session was purged mid-run: no turns, no budget to enforce.
    const gone = { ...(task as object), id: randomUUID(), sessionId: randomUUID() } as never;
    expect(await load(gone)).toEqual([]);
    expect(await counted.state(gone)).toBeNull();
    expect(statements).toEqual(["run-contexts", "session-budget", "run-contexts"]);
  });
});

describe("a session's only task", () => {
  it("the claim reads the session's budget, used tokens and task count with the row", async () => {
    const sessionId = await newSession(700, 30);
    await h.db.$executeRaw`UPDATE sessions SET task_count = 4 WHERE id = ${sessionId}::uuid`;
    const taskId = randomUUID();
    // Queued without a run message: no worker of the harness takes it.
    await h.db.$executeRaw`
      INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id)
      VALUES (${taskId}::uuid, ${h.userId}::uuid, ${sessionId}::uuid, 'q', 'QUEUED', '{}'::jsonb, ${"0".repeat(32)})`;
    const claimed = await h.runs.claim(taskId, "session-claim", 3_000, 60);
    expect(claimed.outcome === "claimed" && claimed.task.session).toEqual({
      tokenBudget: 700,
      tokensUsed: 30,
      taskCount: 4,
    });
  });

  it("reads no history and no budget: what the claim read is enough", async () => {
    const { statements, counted, load } = countedLoader();
    const task = (session: unknown, query = "Next") =>
      ({
        id: randomUUID(),
        sessionId: randomUUID(),
        createdAt: new Date(),
        spec: { query, window: WINDOW },
        session,
      }) as never;

    const only = task({ tokenBudget: 400, tokensUsed: 25, taskCount: 1 });
    expect(await load(only)).toEqual([]);
    // The first model call's check reuses it too.
    expect(await counted.state(only)).toEqual({ budget: 400, used: 25 });
    const gone = task(null);
    expect(await load(gone)).toEqual([]);
    expect(await counted.state(gone)).toBeNull();
    expect(statements).toEqual([]);

    // The claim's budget is enforced as the read's would be.
    await expect(load(task({ tokenBudget: 400, tokensUsed: 400, taskCount: 1 }))).rejects.toMatchObject({
      errorType: "BUDGET_EXCEEDED",
      message: "Session token budget exceeded: 400 of 400 tokens used",
    });
    await expect(
      load(task({ tokenBudget: 10, tokensUsed: 0, taskCount: 1 }, "word ".repeat(40))),
    ).rejects.toMatchObject({ errorType: "BUDGET_EXCEEDED" });
    expect(statements).toEqual([]);

    // A session with other tasks, or a task no claim read (a test's), reads its window.
    await load(task({ tokenBudget: 400, tokensUsed: 0, taskCount: 2 }));
    await load(task(undefined));
    expect(statements).toEqual(["run-contexts", "run-contexts"]);
  });

  it("the claim tells a session's only task from a later one: only the later one reads the window", async () => {
    const { statements, load } = countedLoader();
    const first = await run("Remember the number 7.");
    const claim = async (taskId: string) => {
      const c = await h.runs.claim(taskId, "session-reader", 3_000, 60);
      if (c.outcome !== "claimed") throw new Error(c.outcome);
      return { ...c.task, attempt: c.task.attempts } as never;
    };
    // Its claim found it the session's only task (a claim of a finished task reads nothing: queue one).
    const queued = async (sessionId: string) => {
      const id = randomUUID();
      await h.db.$executeRaw`
        INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id)
        VALUES (${id}::uuid, ${h.userId}::uuid, ${sessionId}::uuid, 'next', 'QUEUED', ${JSON.stringify({ query: "next", window: WINDOW })}::jsonb, ${"0".repeat(32)})`;
      await h.db.$executeRaw`UPDATE sessions SET task_count = task_count + 1 WHERE id = ${sessionId}::uuid`;
      return id;
    };
    const lone = await newSession(1_000);
    expect(await load(await claim(await queued(lone)))).toEqual([]);
    expect(statements).toEqual([]);
    const second = await claim(await queued(first.sessionId));
    expect((second as { session: unknown }).session).toMatchObject({ taskCount: 2 });
    expect((await load(second)).map((m) => m.content)).toEqual(["Remember the number 7.", first.task.result]);
    expect(statements).toEqual(["run-contexts"]);
  });
});
