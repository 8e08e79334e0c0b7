import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createDbPool } from "@tog/db";
import { SubmitRepository } from "../../src/tasks/submit.repository.ts";
import { startRuntimeHarness, submitCommand, type RuntimeHarness } from "./harness.ts";

// The default submission sends its values as escaped literals in one simple-protocol query
// (submit.repository.ts): whatever a client writes must arrive byte for byte, and nothing it
// writes may run as SQL.

describe("submit", () => {
  let h: RuntimeHarness;
  beforeAll(async () => {
    h = await startRuntimeHarness("submit");
  });
  afterAll(async () => h?.close());

  const nasty = [
    "it's \\ a \"test\" $$ $1 E'\\x41' ; DROP TABLE tasks; --",
    "backslash at the end \\",
    "emoji 👩‍💻 and RTL \u202e text, tabs\tand\nnewlines",
    "'; SELECT pg_sleep(10); --",
  ];

  it.each(nasty)("stores %j exactly, in the task and its spec, with a new session", async (query) => {
    const context = { note: query, nested: { quote: "'", backslash: "\\" } };
    const submitted = await h.service.submitTask(submitCommand(h.userId, query, { context }));
    expect(submitted.sessionId).toBe(submitted.sessionRef);
    const rows = await h.db.$queryRaw<
      { query: string; spec: { query: string; metadata: Record<string, unknown> }; task_count: number }[]
    >`
      SELECT t.query, t.spec, s.task_count FROM tasks t JOIN sessions s ON s.id = t.session_id WHERE t.id = ${submitted.taskId}::uuid`;
    expect(rows[0]!.query).toBe(query);
    expect(rows[0]!.spec.query).toBe(query);
    expect(rows[0]!.spec.metadata).toEqual(context);
    expect(rows[0]!.task_count).toBe(1);
  });

  it("gives tasks and new sessions time-ordered ids (UUID version 7), so their indexes grow at the end", async () => {
    const first = await h.service.submitTask(submitCommand(h.userId, "first"));
    const named = await h.service.submitTask(submitCommand(h.userId, "second", { sessionId: `named-${randomUUID()}` }));
    const third = await h.service.submitTask(submitCommand(h.userId, "third"));
    for (const id of [first.taskId, first.sessionId, named.taskId, named.sessionId, third.taskId, third.sessionId])
      expect(id[14], id).toBe("7");
    expect([first.taskId, named.taskId, third.taskId].sort()).toEqual([first.taskId, named.taskId, third.taskId]);
    expect([first.sessionId, named.sessionId, third.sessionId].sort()).toEqual([
      first.sessionId,
      named.sessionId,
      third.sessionId,
    ]);
  });

  it("rolls the task and its new session back when the run cannot be queued", async () => {
    const repository = new SubmitRepository({ pool: h.pool });
    const id = randomUUID();
    const task = {
      id,
      userId: h.userId,
      sessionRef: undefined,
      query: "never queued",
      requestedMode: null,
      spec: {},
      traceId: "0".repeat(32),
      traceparent: null,
      tokenBudget: 10,
    };
    const sessionsBefore = await h.pool.query("SELECT count(*)::int AS n FROM sessions WHERE user_id = $1", [h.userId]);
    await expect(repository.submit(task, async () => Promise.reject(new Error("queue down")))).rejects.toThrow(
      "queue down",
    );
    expect((await h.pool.query("SELECT id FROM tasks WHERE id = $1", [id])).rows).toEqual([]);
    const sessionsAfter = await h.pool.query("SELECT count(*)::int AS n FROM sessions WHERE user_id = $1", [h.userId]);
    expect(sessionsAfter.rows[0].n).toBe(sessionsBefore.rows[0].n);
    // The connection went back to the pool usable (no transaction left open).
    expect((await h.pool.query("SELECT 1 AS ok")).rows[0].ok).toBe(1);
  });

  describe("group commit of new-session submits", () => {
    const newTask = (query: string) => ({
      id: randomUUID(),
      userId: h.userId,
      sessionRef: undefined,
      query,
      requestedMode: null,
      spec: {},
      traceId: "0".repeat(32),
      traceparent: null,
      tokenBudget: 10,
    });
    /** Transactions that wrote these tasks (rows of one transaction share its xmin). */
    const transactionsOf = async (ids: string[]) =>
      (await h.pool.query("SELECT count(DISTINCT xmin::text)::int AS n FROM tasks WHERE id = ANY($1::uuid[])", [ids]))
        .rows[0].n as number;

    it("concurrent submits share transactions, each committed with its run queued once", async () => {
      const repository = new SubmitRepository({ pool: h.pool });
      const tasks = Array.from({ length: 40 }, (_, i) => newTask(`batched ${i}`));
      const queuedRuns: string[] = [];
      const outcomes = await Promise.all(
        tasks.map((t) =>
          repository.submit(t, async () => {
            queuedRuns.push(t.id);
          }),
        ),
      );
      expect(outcomes.every((o) => o.kind === "created")).toBe(true);
      expect(queuedRuns.sort()).toEqual(tasks.map((t) => t.id).sort());
      const rows = await h.pool.query(
        "SELECT t.id::text, s.task_count FROM tasks t JOIN sessions s ON s.id = t.session_id WHERE t.id = ANY($1::uuid[])",
        [tasks.map((t) => t.id)],
      );
      expect(rows.rowCount).toBe(40);
      expect(rows.rows.every((r) => r.task_count === 1)).toBe(true);
      // the first goes out alone, the rest arrived while it was in flight
      expect(await transactionsOf(tasks.map((t) => t.id))).toBeLessThanOrEqual(3);
    });

    it("a batch is one statement, prepared once per connection and planned once", async () => {
      // One connection, so every batch runs on it (docs/performance.md "Prepared statements").
      const pool = createDbPool({ databaseUrl: h.databaseUrl, poolMax: 1 });
      try {
        const repository = new SubmitRepository({ pool });
        const ids: string[] = [];
        for (let round = 0; round < 3; round++) {
          const tasks = Array.from({ length: 5 }, (_, i) => newTask(`prepared ${round}.${i}`));
          ids.push(...tasks.map((t) => t.id));
          const outcomes = await Promise.all(tasks.map((t) => repository.submit(t, async () => undefined)));
          expect(outcomes.every((o) => o.kind === "created")).toBe(true);
        }
        const { rows } = await pool.query<{ generic: string; custom: string }>(
          "SELECT generic_plans AS generic, custom_plans AS custom FROM pg_prepared_statements WHERE name = 'tog_submit_new_sessions'",
        );
        // One execution of the one plan per transaction (batch), whatever the batch's size.
        const batches = await transactionsOf(ids);
        expect(batches).toBeGreaterThanOrEqual(3);
        expect(rows).toEqual([{ generic: String(batches), custom: "0" }]);
      } finally {
        await pool.end();
      }
    });

    it("a connection whose first batch failed keeps working", async () => {
      const pool = createDbPool({ databaseUrl: h.databaseUrl, poolMax: 1 });
      try {
        const repository = new SubmitRepository({ pool });
        // A budget beyond integer range fails the statement on the connection's first batch.
        await expect(
          repository.submit({ ...newTask("too big"), tokenBudget: 2 ** 40 }, async () => undefined),
        ).rejects.toThrow();
        const outcome = await repository.submit(newTask("next"), async () => undefined);
        expect(outcome.kind).toBe("created");
      } finally {
        await pool.end();
      }
    });

    it("a submit whose run cannot be queued fails alone; the others of its batch commit", async () => {
      const repository = new SubmitRepository({ pool: h.pool });
      const tasks = Array.from({ length: 10 }, (_, i) => newTask(`isolated ${i}`));
      const bad = tasks[4]!.id;
      const outcomes = await Promise.allSettled(
        tasks.map((t) =>
          repository.submit(t, async () => {
            if (t.id === bad) throw new Error("queue down");
          }),
        ),
      );
      expect(outcomes.map((o) => o.status)).toEqual(tasks.map((t) => (t.id === bad ? "rejected" : "fulfilled")));
      const ids = (
        await h.pool.query("SELECT id::text FROM tasks WHERE id = ANY($1::uuid[])", [tasks.map((t) => t.id)])
      ).rows
        .map((r) => r.id as string)
        .sort();
      expect(ids).toEqual(
        tasks
          .map((t) => t.id)
          .filter((id) => id !== bad)
          .sort(),
      );
    });

    it("repeats of one identity in one batch: one task, no orphan session", async () => {
      const repository = new SubmitRepository({ pool: h.pool });
      const idempotency = { keyHash: randomUUID().replace(/-/g, "").repeat(2), ttlSeconds: 3_600 };
      const before = await h.pool.query("SELECT count(*)::int AS n FROM sessions WHERE user_id = $1", [h.userId]);
      const outcomes = await Promise.all(
        Array.from({ length: 5 }, () => repository.submit({ ...newTask("same"), idempotency }, async () => undefined)),
      );
      const ids = new Set(outcomes.map((o) => (o.kind === "created" ? "created" : o.taskId)));
      expect(outcomes.filter((o) => o.kind === "created")).toHaveLength(1);
      expect(ids.size).toBe(2);
      const after = await h.pool.query("SELECT count(*)::int AS n FROM sessions WHERE user_id = $1", [h.userId]);
      expect(after.rows[0].n).toBe(before.rows[0].n + 1);
    });
  });

  describe("with an idempotency identity (the task row keeps it: durable beyond Redis)", () => {
    const key = () => randomUUID().replace(/-/g, "").repeat(2);
    const queued = async (taskId: string) =>
      (await h.pool.query("SELECT 1 FROM tasks WHERE id = $1", [taskId])).rowCount;
    const tasksWith = async (hash: string) =>
      (await h.pool.query("SELECT count(*)::int AS n FROM tasks WHERE idempotency_key = $1", [hash])).rows[0].n;

    it.each([
      ["a new session", undefined],
      ["a named session", "idem-session"],
    ])("a repeat returns the first task and writes nothing (%s)", async (_label, sessionId) => {
      const idempotency = { keyHash: key(), ttlSeconds: 3_600 };
      const first = await h.service.submitTask({ ...submitCommand(h.userId, "once", { sessionId }), idempotency });
      expect(first.replayed).toBeUndefined();
      const sessions = await h.pool.query(
        "SELECT count(*)::int AS n, sum(task_count)::int AS c FROM sessions WHERE user_id = $1",
        [h.userId],
      );
      const again = await h.service.submitTask({ ...submitCommand(h.userId, "once", { sessionId }), idempotency });
      expect(again).toMatchObject({
        taskId: first.taskId,
        sessionId: first.sessionId,
        sessionRef: first.sessionRef,
        createdAt: first.createdAt,
        replayed: true,
      });
      expect(await tasksWith(idempotency.keyHash)).toBe(1);
      expect(await queued(first.taskId)).toBe(1);
      // No orphan session, no second count on the named one.
      expect(
        (
          await h.pool.query("SELECT count(*)::int AS n, sum(task_count)::int AS c FROM sessions WHERE user_id = $1", [
            h.userId,
          ])
        ).rows[0],
      ).toEqual(sessions.rows[0]);
      // Another user with the same identity is someone else's request.
      const other = await h.service.submitTask({ ...submitCommand(h.otherUserId, "once"), idempotency });
      expect(other.taskId).not.toBe(first.taskId);
    });

    it("concurrent repeats create one task", async () => {
      const idempotency = { keyHash: key(), ttlSeconds: 3_600 };
      const results = await Promise.all(
        Array.from({ length: 6 }, () => h.service.submitTask({ ...submitCommand(h.userId, "race"), idempotency })),
      );
      expect(new Set(results.map((r) => r.taskId)).size).toBe(1);
      expect(await tasksWith(idempotency.keyHash)).toBe(1);
    });

    it("after the TTL the same identity creates a new task", async () => {
      const idempotency = { keyHash: key(), ttlSeconds: 60 };
      const first = await h.service.submitTask({ ...submitCommand(h.userId, "old"), idempotency });
      await h.pool.query("UPDATE tasks SET created_at = now() - interval '2 minutes' WHERE id = $1", [first.taskId]);
      const second = await h.service.submitTask({ ...submitCommand(h.userId, "old"), idempotency });
      expect(second.taskId).not.toBe(first.taskId);
      expect(second.replayed).toBeUndefined();
      const third = await h.service.submitTask({ ...submitCommand(h.userId, "old"), idempotency });
      expect(third).toMatchObject({ taskId: second.taskId, replayed: true });
    });
  });
});
