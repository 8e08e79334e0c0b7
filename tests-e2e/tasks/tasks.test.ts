// Task execution end to end: gateway → gRPC orchestrator → JetStream → worker processes →
// PostgreSQL, every service its own process behind the local router, auth on.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { gatewayOperations, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import { EVENT_PAYLOAD_SCHEMAS } from "@tog/events";
import {
  allEvents,
  expectWellFormed,
  get,
  post,
  submit,
  waitForEvent,
  waitForStatus,
  newClient,
  type Client,
  type Json,
} from "./support.ts";

let env: E2eEnvironment;
let alice: Client;
let bob: Client;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RUN_ACK_WAIT_SECONDS: "2", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: { worker: { OFFLINE_CHUNK_DELAY_MS: "15", RUN_LEASE_MS: "1500", APPROVAL_TIMEOUT_SECONDS: "4" } },
  });
  alice = await newClient(env, "alice");
  bob = await newClient(env, "bob");
}, 120_000);
afterAll(async () => {
  await env?.close();
});

describe("the public API document", () => {
  it("lists the contract's 19 endpoints (tasks, streams, sessions, probes) in one OpenAPI document", async () => {
    const ops = await gatewayOperations(env.baseUrl);
    const contract = [
      "POST /api/v1/tasks",
      "POST /api/v1/tasks/stream",
      "GET /api/v1/tasks",
      "GET /api/v1/tasks/{id}",
      "GET /api/v1/tasks/{id}/events",
      "GET /api/v1/tasks/{id}/timeline",
      "POST /api/v1/tasks/{id}/cancel",
      "POST /api/v1/approvals/decision",
      "GET /api/v1/stream/sse",
      "GET /api/v1/stream/ws",
      "GET /api/v1/sessions",
      "GET /api/v1/sessions/{sessionId}",
      "GET /api/v1/sessions/{sessionId}/history",
      "GET /api/v1/sessions/{sessionId}/events",
      "PATCH /api/v1/sessions/{sessionId}",
      "DELETE /api/v1/sessions/{sessionId}",
      "GET /api/v1/health",
      "GET /api/v1/readiness",
      "GET /api/v1/openapi.json",
    ];
    expect(contract).toHaveLength(19);
    for (const op of contract) expect(ops, op).toContain(op);
  });
});

describe("submit, poll, history", () => {
  it("runs a simple task on the offline provider to COMPLETED with the contract's shapes", async () => {
    const res = await submit(alice, { query: "Say hello in one short sentence", mode: "simple" });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      task_id: expect.any(String),
      status: "STATUS_CODE_OK",
      message: expect.any(String),
      created_at: expect.any(String),
    });
    const taskId = res.body.task_id as string;
    expect(res.headers.get("x-workflow-id")).toBe(taskId);
    const sessionId = res.headers.get("x-session-id");
    expect(sessionId).toMatch(/^[0-9a-f-]{36}$/);

    const detail = await waitForStatus(alice, taskId);
    expect(detail).toMatchObject({
      task_id: taskId,
      status: "TASK_STATUS_COMPLETED",
      error: "",
      query: "Say hello in one short sentence",
      session_id: sessionId,
      mode: "EXECUTION_MODE_SIMPLE",
      provider: "offline",
    });
    expect(detail.result).toEqual(expect.any(String));
    expect(detail.model_used).toMatch(/offline/);
    expect(detail.usage.total_tokens).toBeGreaterThan(0);
    expect(Date.parse(detail.updated_at)).toBeGreaterThanOrEqual(Date.parse(detail.created_at));

    const events = await allEvents(alice, taskId);
    expectWellFormed(events);
    const types = events.map((e) => e.type);
    expect(types[0]).toBe("WORKFLOW_STARTED");
    for (const t of ["AGENT_STARTED", "LLM_PROMPT", "LLM_PARTIAL", "LLM_OUTPUT", "WORKFLOW_COMPLETED"])
      expect(types).toContain(t);
    for (const e of events)
      expect(EVENT_PAYLOAD_SCHEMAS[e.type as keyof typeof EVENT_PAYLOAD_SCHEMAS].safeParse(e.data).success).toBe(true);
    expect(events.at(-1)!.data.result).toBe(detail.result);

    const list = await get(alice, `/tasks?session_id=${sessionId}`);
    expect(list.status).toBe(200);
    expect(list.body.total_count).toBe(1);
    expect(list.body.tasks[0]).toMatchObject({
      task_id: taskId,
      status: "TASK_STATUS_COMPLETED",
      completed_at: expect.any(String),
    });
  });

  it("pages the event history by offset and by seq cursor, and builds the same timeline every time", async () => {
    const { body } = await submit(alice, { query: "What is 12*(3+4)?", mode: "standard" });
    const taskId = body.task_id as string;
    await waitForStatus(alice, taskId);
    const events = await allEvents(alice, taskId);
    expect(events.map((e) => e.type)).toEqual(expect.arrayContaining(["TOOL_INVOKED", "TOOL_OBSERVATION"]));
    const page = await get(alice, `/tasks/${taskId}/events?limit=3&offset=2`);
    expect(page.status).toBe(200);
    expect(page.body.events.map((e: Json) => e.seq)).toEqual([3, 4, 5]);
    expect(page.body.total_count).toBe(events.length);
    const cursor = await get(alice, `/tasks/${taskId}/events?limit=2&after_seq=4`);
    expect(cursor.body.events.map((e: Json) => e.seq)).toEqual([5, 6]);
    expect((await get(alice, `/tasks/${taskId}/events?limit=0`)).status).toBe(400);

    const t1 = await get(alice, `/tasks/${taskId}/timeline`);
    const t2 = await get(alice, `/tasks/${taskId}/timeline`);
    expect(t1.status).toBe(200);
    expect(t1.text).toBe(t2.text);
    const kinds = new Set((t1.body.events as Json[]).map((e) => e.kind));
    for (const k of ["workflow", "llm", "tool"]) expect(kinds).toContain(k);
  });

  it("shows tasks, events and timelines to their owner only", async () => {
    const { body } = await submit(alice, { query: "private thoughts", mode: "simple" });
    const taskId = body.task_id as string;
    for (const path of [`/tasks/${taskId}`, `/tasks/${taskId}/events`, `/tasks/${taskId}/timeline`]) {
      const res = await get(bob, path);
      expect(res.status).toBe(404);
      expect(res.body).toEqual({ error: "Task not found" });
    }
    expect((await post(bob, `/tasks/${taskId}/cancel`)).status).toBe(403);
    expect((await get(bob, "/tasks")).body.tasks.map((t: Json) => t.task_id)).not.toContain(taskId);
    const session = `chat-${randomUUID()}`;
    const first = await submit(alice, { query: "first", session_id: session });
    expect(first.status).toBe(200);
    // a session UUID of another user is forbidden; the same external id is bob's own session
    const aliceSessionUuid = (await get(alice, `/sessions/${session}`)).body.session_id as string;
    const stolen = await submit(bob, { query: "second", session_id: aliceSessionUuid });
    expect(stolen.status).toBe(403);
    expect(stolen.body).toEqual({ error: "Forbidden" });
    const own = await submit(bob, { query: "second", session_id: session });
    expect(own.status).toBe(200);
    expect((await get(bob, `/sessions/${session}`)).body.session_id).not.toBe(aliceSessionUuid);
  });

  it("submits idempotently: one task per Idempotency-Key", async () => {
    const key = randomUUID();
    const [a, b] = await Promise.all([
      submit(alice, { query: "once" }, { "Idempotency-Key": key }),
      submit(alice, { query: "once" }, { "Idempotency-Key": key }),
    ]);
    expect(a.status).toBe(200);
    expect(b.status).toBe(200);
    expect(a.body.task_id).toBe(b.body.task_id);
    const list = await get(alice, "/tasks?limit=100");
    expect(list.body.tasks.filter((t: Json) => t.query === "once")).toHaveLength(1);
  });
});

describe("cancellation", () => {
  it("cancels a running task: 202, then CANCELLED with a terminal ERROR_OCCURRED, then 409", async () => {
    const { body } = await submit(alice, {
      query: "Write a long essay about the history of computing",
      mode: "simple",
    });
    const taskId = body.task_id as string;
    await waitForEvent(alice, taskId, "LLM_PARTIAL");
    const res = await post(alice, `/tasks/${taskId}/cancel`, { reason: "enough" });
    expect(res.status).toBe(202);
    expect(res.body).toMatchObject({ success: true, message: expect.any(String) });
    const detail = await waitForStatus(alice, taskId);
    expect(detail.status).toBe("TASK_STATUS_CANCELLED");
    expect(detail).not.toHaveProperty("result");
    const events = await allEvents(alice, taskId);
    expectWellFormed(events);
    expect(events.at(-1)!.data).toMatchObject({ terminal: true, status: "CANCELLED", error_type: "CANCELLED" });
    const again = await post(alice, `/tasks/${taskId}/cancel`);
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ success: false, message: expect.stringContaining("CANCELLED"), status: "CANCELLED" });
    expect((await post(alice, `/tasks/${randomUUID()}/cancel`)).body).toEqual({ error: "Task not found" });
  });

  it("cancels a complex task and every child task", async () => {
    const { body } = await submit(alice, {
      query: "Research the history of Rome, then compare it with Athens, and summarize both",
      mode: "complex",
    });
    const taskId = body.task_id as string;
    await waitForEvent(alice, taskId, "AGENT_STARTED");
    expect((await post(alice, `/tasks/${taskId}/cancel`)).status).toBe(202);
    expect((await waitForStatus(alice, taskId)).status).toBe("TASK_STATUS_CANCELLED");
    expectWellFormed(await allEvents(alice, taskId));
    const timeline = await get(alice, `/tasks/${taskId}/timeline`);
    const children = (timeline.body.events as Json[]).filter((e) => e.kind === "child");
    expect(children.length).toBeGreaterThan(0);
    expect(children.every((c) => c.status === "completed" || c.status === "cancelled")).toBe(true);
    expect(children.some((c) => c.status === "cancelled")).toBe(true);
  });
});

describe("approvals", () => {
  const requireApproval = (query: string) =>
    submit(alice, { query, mode: "simple", context: { require_approval: true } });

  it("approved → the task continues and completes; a second decision is refused", async () => {
    const taskId = (await requireApproval("Summarize the plan")).body.task_id as string;
    const requested = await waitForEvent(alice, taskId, "APPROVAL_REQUESTED");
    const approvalId = requested.data.approval_id as string;
    expect(requested.data).toMatchObject({
      tool_name: expect.any(String),
      operation: expect.any(String),
      risk_level: expect.any(String),
      timeout_seconds: 4,
    });
    expect(
      (await post(bob, "/approvals/decision", { workflow_id: taskId, approval_id: approvalId, approved: true })).status,
    ).toBe(403);
    expect(
      (await post(alice, "/approvals/decision", { workflow_id: taskId, approval_id: "apr_nope", approved: true }))
        .status,
    ).toBe(404);
    expect((await post(alice, "/approvals/decision", { workflow_id: taskId, approval_id: approvalId })).status).toBe(
      400,
    );
    const res = await post(alice, "/approvals/decision", {
      workflow_id: taskId,
      approval_id: approvalId,
      approved: true,
      feedback: "go",
    });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "sent",
      success: true,
      message: expect.stringContaining(approvalId),
      workflow_id: taskId,
      run_id: "",
      approval_id: approvalId,
    });
    expect(
      (await post(alice, "/approvals/decision", { workflow_id: taskId, approval_id: approvalId, approved: false }))
        .status,
    ).toBe(409);
    expect((await waitForStatus(alice, taskId)).status).toBe("TASK_STATUS_COMPLETED");
    const events = await allEvents(alice, taskId);
    expectWellFormed(events);
    const decision = events.find((e) => e.type === "APPROVAL_DECISION")!;
    expect(decision.data).toMatchObject({ approval_id: approvalId, decision: "approved", comments: "go" });
    expect(events.map((e) => e.type)).toContain("WAITING");
  });

  it("denied → FAILED with APPROVAL_DENIED", async () => {
    const taskId = (await requireApproval("Delete everything")).body.task_id as string;
    const approvalId = (await waitForEvent(alice, taskId, "APPROVAL_REQUESTED")).data.approval_id;
    expect(
      (await post(alice, "/approvals/decision", { workflow_id: taskId, approval_id: approvalId, approved: false }))
        .status,
    ).toBe(200);
    const detail = await waitForStatus(alice, taskId);
    expect(detail.status).toBe("TASK_STATUS_FAILED");
    expect((await allEvents(alice, taskId)).at(-1)!.data).toMatchObject({
      error_type: "APPROVAL_DENIED",
      terminal: true,
    });
  });

  it("no decision in time → the approval times out and the task fails with APPROVAL_TIMEOUT", async () => {
    const taskId = (await requireApproval("Wait for nobody")).body.task_id as string;
    const detail = await waitForStatus(alice, taskId, undefined, 20_000);
    expect(detail.status).toBe("TASK_STATUS_FAILED");
    const events = await allEvents(alice, taskId);
    expect(events.find((e) => e.type === "APPROVAL_DECISION")!.data).toMatchObject({
      decision: "timeout",
      approved_by: "system",
    });
    expect(events.at(-1)!.data).toMatchObject({ error_type: "APPROVAL_TIMEOUT" });
  });
});

describe("worker crash", () => {
  it("a worker SIGKILLed mid-task: another worker resumes from the checkpoints; completes once, seq gap-free, no step repeated", async () => {
    const spare = await env.stack.startInstance("worker", {
      env: { OFFLINE_CHUNK_DELAY_MS: "15", RUN_LEASE_MS: "1500" },
    });
    await spare.stop(5_000);
    // Only one worker pulls now: the stack's. Kill it while the task is in its second step.
    const { body } = await submit(alice, {
      query: "Research the history of Rome, then compare it with Athens, and summarize both",
      mode: "complex",
    });
    const taskId = body.task_id as string;
    await waitForEvent(alice, taskId, "LLM_PARTIAL", 20_000);
    await env.service("worker").kill();
    await env.stack.startInstance("worker", { env: { OFFLINE_CHUNK_DELAY_MS: "1", RUN_LEASE_MS: "1500" } });
    const detail = await waitForStatus(alice, taskId, undefined, 60_000);
    expect(detail.status).toBe("TASK_STATUS_COMPLETED");
    const events = await allEvents(alice, taskId);
    expectWellFormed(events);
    expect(events.map((e) => e.type)).toContain("ERROR_RECOVERY");
    // Each model call is one checkpointed `llm` step that commits exactly one LLM_OUTPUT: a repeated
    // step or a re-emitted result would make these differ.
    const timeline = await get(alice, `/tasks/${taskId}/timeline`);
    const llmSteps = (timeline.body.events as Json[]).filter((e) => e.kind === "llm");
    const outputs = events.filter((e) => e.type === "LLM_OUTPUT");
    expect(llmSteps.length).toBeGreaterThan(1);
    expect(outputs).toHaveLength(llmSteps.length);
    expect(events.filter((e) => e.type === "WORKFLOW_STARTED")).toHaveLength(1);
  }, 90_000);
});
