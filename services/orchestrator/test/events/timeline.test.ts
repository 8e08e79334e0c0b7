import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { NotFoundError } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import { createTestDatabase, type TestDatabase } from "@tog/testkit";
import { buildTimeline } from "../../src/events/index.ts";
import { TRACE_ID } from "./helpers.ts";

const at = (offsetMs: number) => new Date(Date.UTC(2026, 0, 1, 10) + offsetMs);

interface Step {
  key: string;
  kind: string;
  name: string;
  agent: string;
  status: string;
  start: number;
  end: number | null;
  output?: unknown;
}

// A complex run: two children started in the same millisecond, a grandchild, an approval
// (its durable step and its record start together), two signals in the same millisecond.
const STEPS: Step[] = [
  {
    key: "start",
    kind: "start",
    name: "start",
    agent: "orchestrator",
    status: "completed",
    start: 100,
    end: 150,
    output: { mode: "complex" },
  },
  {
    key: "plan",
    kind: "plan",
    name: "decompose",
    agent: "orchestrator",
    status: "completed",
    start: 200,
    end: 400,
    output: { subtasks: 2 },
  },
  { key: "child:b", kind: "child", name: "writer", agent: "agent-b", status: "completed", start: 500, end: 2_900 },
  { key: "child:a", kind: "child", name: "researcher", agent: "agent-a", status: "completed", start: 500, end: 3_000 },
  {
    key: "child:a/llm:0",
    kind: "llm",
    name: "gpt-5-nano",
    agent: "agent-a",
    status: "completed",
    start: 500,
    end: 900,
    output: { text: "é🌍" },
  },
  {
    key: "child:b/tool:0:calculator",
    kind: "tool",
    name: "calculator",
    agent: "agent-b",
    status: "running",
    start: 600,
    end: null,
  },
  {
    key: "child:a/child:x/tool:0:json",
    kind: "tool",
    name: "json",
    agent: "agent-x",
    status: "completed",
    start: 1_000,
    end: 1_000,
  },
  {
    key: "child:a/child:x",
    kind: "child",
    name: "helper",
    agent: "agent-x",
    status: "completed",
    start: 1_000,
    end: 1_200,
  },
  {
    key: "approval:tool:3",
    kind: "approval",
    name: "http_fetch",
    agent: "orchestrator",
    status: "completed",
    start: 2_000,
    end: 2_500,
  },
  {
    key: "synthesis",
    kind: "synthesis",
    name: "synthesize",
    agent: "orchestrator",
    status: "completed",
    start: 3_100,
    end: 4_800,
  },
  {
    key: "finish",
    kind: "finish",
    name: "finish",
    agent: "orchestrator",
    status: "completed",
    start: 4_900,
    end: 4_950,
  },
];

describe("timeline", () => {
  let tdb: TestDatabase;
  let db: Db;
  const userId = randomUUID();
  const sessionId = randomUUID();

  beforeAll(async () => {
    tdb = await createTestDatabase();
    db = createDbClient({ databaseUrl: tdb.url, poolMax: 2 });
    await db.$executeRaw`INSERT INTO users (id, name) VALUES (${userId}::uuid, 'u')`;
    await db.$executeRaw`INSERT INTO sessions (id, user_id, token_budget) VALUES (${sessionId}::uuid, ${userId}::uuid, 1000)`;
  });
  afterAll(async () => {
    await db.$disconnect();
    await tdb.drop();
  });

  async function insertTask(options: {
    status: string;
    started: number | null;
    completed: number | null;
  }): Promise<string> {
    const id = randomUUID();
    await db.$executeRaw`
      INSERT INTO tasks (id, user_id, session_id, query, status, spec, trace_id, mode, result, created_at, started_at, completed_at)
      VALUES (${id}::uuid, ${userId}::uuid, ${sessionId}::uuid, 'what is 2+2?', ${options.status}, '{}'::jsonb, ${TRACE_ID},
              'EXECUTION_MODE_COMPLEX', '4', ${at(0)}, ${options.started === null ? null : at(options.started)},
              ${options.completed === null ? null : at(options.completed)})`;
    return id;
  }

  async function insertRun(id: string, stepOrder: Step[]): Promise<void> {
    for (const s of stepOrder) {
      await db.$executeRaw`
        INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, output, started_at, completed_at)
        VALUES (${id}::uuid, ${s.key}, ${s.kind}, ${s.name}, ${s.agent}, ${s.status},
                ${s.output === undefined ? null : JSON.stringify(s.output)}::jsonb, ${at(s.start)}, ${s.end === null ? null : at(s.end)})`;
    }
    await db.$executeRaw`
      INSERT INTO approvals (id, task_id, status, tool_name, operation, risk_level, details, timeout_seconds,
                             requested_at, expires_at, decided_at, decided_by, comments)
      VALUES (${`appr-${id}`}, ${id}::uuid, 'approved', 'http_fetch', 'GET https://example.com', 'high',
              '{"url": "https://example.com", "method": "GET"}'::jsonb, 300, ${at(2_000)}, ${at(302_000)}, ${at(2_400)}, 'alice', 'ok')`;
    await db.$executeRaw`
      INSERT INTO task_signals (task_id, name, payload, created_at)
      VALUES (${id}::uuid, 'approval', '{"approved": true}'::jsonb, ${at(2_400)}),
             (${id}::uuid, 'cancel', '{"reason": "late"}'::jsonb, ${at(2_400)})`;
  }

  it("orders entries by start time, kind and key, numbering them from 1", async () => {
    const id = await insertTask({ status: "COMPLETED", started: 100, completed: 5_000 });
    await insertRun(id, STEPS);
    const timeline = await buildTimeline({ db, taskId: id, includePayloads: false });

    expect(timeline.taskId).toBe(id);
    expect(timeline.status).toBe("COMPLETED");
    expect(timeline.entries.map((e) => [e.seq, e.kind, e.name, e.parent])).toEqual([
      [1, "workflow", "workflow", null],
      [2, "start", "start", null],
      [3, "plan", "decompose", null],
      [4, "child", "researcher", null],
      [5, "child", "writer", null],
      [6, "llm", "gpt-5-nano", "child:a"],
      [7, "tool", "calculator", "child:b"],
      [8, "child", "helper", "child:a"],
      [9, "tool", "json", "child:a/child:x"],
      [10, "approval", "http_fetch", null],
      [11, "approval", "http_fetch", null],
      [12, "signal", "approval", null],
      [13, "signal", "cancel", null],
      [14, "synthesis", "synthesize", null],
      [15, "finish", "finish", null],
    ]);
    expect(timeline.entries[0]).toEqual({
      seq: 1,
      kind: "workflow",
      name: "workflow",
      agentId: "orchestrator",
      status: "COMPLETED",
      startedAt: "2026-01-01T10:00:00.100Z",
      completedAt: "2026-01-01T10:00:05.000Z",
      durationMs: 4_900,
      parent: null,
    });
    // A step still running has no end and no duration.
    expect(timeline.entries[6]).toMatchObject({
      agentId: "agent-b",
      status: "running",
      completedAt: null,
      durationMs: null,
    });
    // The approval record spans request → decision; a signal is an instant.
    expect(timeline.entries[10]).toMatchObject({ status: "approved", durationMs: 400 });
    expect(timeline.entries[11]).toMatchObject({
      status: "received",
      durationMs: 0,
      startedAt: "2026-01-01T10:00:02.400Z",
    });
    for (const e of timeline.entries) expect(e).not.toHaveProperty("payload");
  });

  it("gives byte-identical output for the same data, whatever the order rows were written in", async () => {
    const a = await insertTask({ status: "COMPLETED", started: 100, completed: 5_000 });
    await insertRun(a, STEPS);
    const b = await insertTask({ status: "COMPLETED", started: 100, completed: 5_000 });
    await insertRun(b, [...STEPS].reverse());

    const first = await buildTimeline({ db, taskId: a, includePayloads: true });
    const second = await buildTimeline({ db, taskId: a, includePayloads: true });
    expect(second).toEqual(first);
    expect(JSON.stringify(second)).toBe(JSON.stringify(first));

    const other = await buildTimeline({ db, taskId: b, includePayloads: true });
    const normalize = (t: typeof first, id: string) => JSON.stringify(t).replaceAll(id, "<id>");
    expect(normalize(other, b)).toBe(normalize(first, a));
  });

  it("adds payloads on request: step output, approval details, signal payload, task outcome", async () => {
    const id = await insertTask({ status: "COMPLETED", started: 100, completed: 5_000 });
    await insertRun(id, STEPS);
    const { entries } = await buildTimeline({ db, taskId: id, includePayloads: true });
    expect(entries[0]!.payload).toEqual({
      query: "what is 2+2?",
      mode: "EXECUTION_MODE_COMPLEX",
      result: "4",
      error: "",
      error_type: null,
    });
    expect(entries[1]!.payload).toEqual({ mode: "complex" });
    expect(entries[5]!.payload).toEqual({ text: "é🌍" });
    expect(entries[3]!.payload).toBeNull();
    expect(entries[10]!.payload).toEqual({
      approval_id: `appr-${id}`,
      tool_name: "http_fetch",
      operation: "GET https://example.com",
      risk_level: "high",
      details: { method: "GET", url: "https://example.com" },
      timeout_seconds: 300,
      expires_at: "2026-01-01T10:05:02.000Z",
      decided_by: "alice",
      comments: "ok",
      modified_action: null,
      run_id: null,
    });
    expect(entries[11]!.payload).toEqual({ approved: true });
    expect(entries[12]!.payload).toEqual({ reason: "late" });
  });

  it("starts a queued task's timeline at its submission", async () => {
    const id = await insertTask({ status: "QUEUED", started: null, completed: null });
    const timeline = await buildTimeline({ db, taskId: id, includePayloads: false });
    expect(timeline.status).toBe("QUEUED");
    expect(timeline.entries).toEqual([
      {
        seq: 1,
        kind: "workflow",
        name: "workflow",
        agentId: "orchestrator",
        status: "QUEUED",
        startedAt: "2026-01-01T10:00:00.000Z",
        completedAt: null,
        durationMs: null,
        parent: null,
      },
    ]);
  });

  it("answers Task not found for an unknown or malformed id", async () => {
    await expect(buildTimeline({ db, taskId: randomUUID(), includePayloads: false })).rejects.toThrow(NotFoundError);
    await expect(buildTimeline({ db, taskId: "nope", includePayloads: false })).rejects.toThrow("Task not found");
  });
});
