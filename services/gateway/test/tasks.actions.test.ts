import { describe, expect, it } from "vitest";
import { randomUUID } from "node:crypto";
import SwaggerParser from "@apidevtools/swagger-parser";
import { pingCheck, runReadiness } from "@tog/ops";
import { InMemoryOrchestrator } from "./support/in-memory-orchestrator.ts";
import { call, useTaskApp, type TaskApp, type TestUser } from "./support/task-app.ts";

let app: TaskApp;
let alice: TestUser;
let bob: TestUser;

useTaskApp((...fixture) => ([app, alice, bob] = fixture));

describe("POST /api/v1/tasks/{id}/cancel", () => {
  const cancel = (id: string, options: Parameters<typeof call>[3] = {}) =>
    call(app.base, "POST", `/api/v1/tasks/${id}/cancel`, { key: alice.key, ...options });

  it("accepts a bare POST (no body, no Content-Type) for a queued task: 202", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "QUEUED" });
    const res = await cancel(task.taskId);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ success: true, message: "Task cancelled" });
    expect(app.orchestrator.calls.cancelTask).toEqual([{ userId: alice.id, taskId: task.taskId, reason: undefined }]);
  });

  it("passes the reason; repeated calls answer 202 while running, then 409 naming the terminal state", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    const first = await cancel(task.taskId, { json: { reason: "no longer needed" } });
    expect(first.status).toBe(202);
    expect(first.body).toEqual({ success: true, message: "Cancellation requested" });
    expect(app.orchestrator.calls.cancelTask[0]!.reason).toBe("no longer needed");
    expect((await cancel(task.taskId, { json: {} })).status).toBe(202);

    app.orchestrator.tasks.get(task.taskId)!.status = "CANCELLED";
    const done = await cancel(task.taskId);
    expect(done.status).toBe(409);
    expect(done.body).toEqual({ success: false, message: "Task is already CANCELLED", status: "CANCELLED" });
  });

  it("answers 409 for every terminal state", async () => {
    for (const status of ["COMPLETED", "FAILED", "TIMEOUT"] as const) {
      const task = app.orchestrator.seed({ userId: alice.id, status });
      const res = await cancel(task.taskId, { json: { reason: null } });
      expect(res.status).toBe(409);
      expect(res.body).toEqual({ success: false, message: `Task is already ${status}`, status });
    }
  });

  it("404 for unknown or malformed ids, 403 for another user's task", async () => {
    const unknown = await cancel(randomUUID());
    expect(unknown.status).toBe(404);
    expect(unknown.body).toEqual({ error: "Task not found" });
    const malformed = await cancel("task-1-2");
    expect(malformed.status).toBe(404);
    expect(malformed.body).toEqual({ error: "Task not found" });

    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    const foreign = await call(app.base, "POST", `/api/v1/tasks/${task.taskId}/cancel`, { key: bob.key });
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: "Forbidden" });
    expect(app.orchestrator.tasks.get(task.taskId)!.status).toBe("RUNNING");
  });

  it("validates the body and its Content-Type", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    const long = await cancel(task.taskId, { json: { reason: "r".repeat(1001) } });
    expect(long.status).toBe(400);
    expect(long.body).toEqual({ error: "reason must be a string of at most 1000 characters" });
    const typed = await cancel(task.taskId, { json: { reason: 5 } });
    expect(typed.body).toEqual({ error: "reason must be a string of at most 1000 characters" });
    const array = await cancel(task.taskId, { json: [] });
    expect(array.body).toEqual({ error: "Invalid request body: expected a JSON object" });
    const text = await cancel(task.taskId, { raw: "stop", headers: { "Content-Type": "text/plain" } });
    expect(text.status).toBe(415);
    expect(text.body).toEqual({ error: "Content-Type must be application/json" });
    expect(app.orchestrator.calls.cancelTask).toHaveLength(0);
    expect((await cancel(task.taskId, { json: { reason: "r".repeat(1000) } })).status).toBe(202);
  });

  it("needs an API key", async () => {
    const res = await call(app.base, "POST", `/api/v1/tasks/${randomUUID()}/cancel`);
    expect(res.status).toBe(401);
  });
});

describe("POST /api/v1/approvals/decision", () => {
  const decide = (json: unknown, key = alice.key) =>
    call(app.base, "POST", "/api/v1/approvals/decision", { key, json });

  it("delivers an approval: 200 per 2.10, approved_by defaults to the caller", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    const approvalId = app.orchestrator.addApproval(task.taskId);
    const res = await decide({ workflow_id: task.taskId, approval_id: approvalId, approved: true });
    expect(res.status).toBe(200);
    expect(res.body).toEqual({
      status: "sent",
      success: true,
      message: `Approval decision sent for approval ${approvalId}`,
      workflow_id: task.taskId,
      run_id: "",
      approval_id: approvalId,
    });
    expect(app.orchestrator.calls.decideApproval).toEqual([
      {
        userId: alice.id,
        taskId: task.taskId,
        approvalId,
        approved: true,
        feedback: undefined,
        modifiedAction: undefined,
        runId: undefined,
        approvedBy: alice.id,
      },
    ]);
  });

  it("passes a denial with its optional fields and echoes run_id", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    const approvalId = app.orchestrator.addApproval(task.taskId);
    const res = await decide({
      workflow_id: task.taskId,
      approval_id: approvalId,
      approved: false,
      feedback: "too risky",
      modified_action: "read only",
      run_id: "run-9",
      approved_by: "ops@example.com",
    });
    expect(res.status).toBe(200);
    expect(res.body.run_id).toBe("run-9");
    expect(app.orchestrator.calls.decideApproval[0]).toMatchObject({
      approved: false,
      feedback: "too risky",
      modifiedAction: "read only",
      runId: "run-9",
      approvedBy: "ops@example.com",
    });
    expect(app.orchestrator.approvals.get(approvalId)!.status).toBe("denied");
  });

  it("refuses incomplete or mistyped decisions with a message naming the field", async () => {
    const id = randomUUID();
    const cases: [unknown, string][] = [
      [{}, "workflow_id is required"],
      [{ approval_id: "a", approved: true }, "workflow_id is required"],
      [{ workflow_id: " ", approval_id: "a", approved: true }, "workflow_id is required"],
      [{ workflow_id: 7, approval_id: "a", approved: true }, "workflow_id must be a string"],
      [{ workflow_id: id, approved: true }, "approval_id is required"],
      [{ workflow_id: id, approval_id: "", approved: true }, "approval_id is required"],
      [{ workflow_id: id, approval_id: "a" }, "approved is required"],
      [{ workflow_id: id, approval_id: "a", approved: null }, "approved is required"],
      [{ workflow_id: id, approval_id: "a", approved: "true" }, "approved must be a boolean (true or false)"],
      [{ workflow_id: id, approval_id: "a".repeat(256), approved: true }, "approval_id must be at most 255 characters"],
      [
        { workflow_id: id, approval_id: "a", approved: true, feedback: "f".repeat(10_001) },
        "feedback must be a string of at most 10000 characters",
      ],
      [
        { workflow_id: id, approval_id: "a", approved: true, modified_action: 1 },
        "modified_action must be a string of at most 10000 characters",
      ],
      [
        { workflow_id: id, approval_id: "a", approved: true, run_id: "r".repeat(256) },
        "run_id must be a string of at most 255 characters",
      ],
      [
        { workflow_id: id, approval_id: "a", approved: true, approved_by: "" },
        "approved_by must be a non-empty string of at most 255 characters",
      ],
      [[1], "Invalid request body: expected a JSON object"],
    ];
    for (const [body, error] of cases) {
      const res = await decide(body);
      expect({ body, status: res.status, error: res.body }).toEqual({ body, status: 400, error: { error } });
    }
    const bare = await call(app.base, "POST", "/api/v1/approvals/decision", { key: alice.key });
    expect(bare.body).toEqual({ error: "workflow_id is required" });
    const text = await call(app.base, "POST", "/api/v1/approvals/decision", {
      key: alice.key,
      raw: "approved=true",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
    });
    expect(text.status).toBe(415);
    expect(app.orchestrator.calls.decideApproval).toHaveLength(0);
  });

  it("404 for an unknown task, a non-UUID workflow_id or an unknown approval; 403 for another user's; 409 once decided", async () => {
    const task = app.orchestrator.seed({ userId: alice.id, status: "RUNNING" });
    const approvalId = app.orchestrator.addApproval(task.taskId);

    const unknownTask = await decide({ workflow_id: randomUUID(), approval_id: approvalId, approved: true });
    expect(unknownTask.status).toBe(404);
    expect(unknownTask.body).toEqual({ error: "Task not found" });
    const notUuid = await decide({ workflow_id: "wf-1", approval_id: approvalId, approved: true });
    expect(notUuid.status).toBe(404);
    expect(notUuid.body).toEqual({ error: "Task not found" });
    const unknownApproval = await decide({ workflow_id: task.taskId, approval_id: "apr_nope", approved: true });
    expect(unknownApproval.status).toBe(404);
    expect(unknownApproval.body).toEqual({ error: "Approval not found" });

    const foreign = await decide({ workflow_id: task.taskId, approval_id: approvalId, approved: true }, bob.key);
    expect(foreign.status).toBe(403);
    expect(foreign.body).toEqual({ error: "Forbidden" });

    expect((await decide({ workflow_id: task.taskId, approval_id: approvalId, approved: true })).status).toBe(200);
    const again = await decide({ workflow_id: task.taskId, approval_id: approvalId, approved: false });
    expect(again.status).toBe(409);
    expect(again.body).toEqual({ error: "Approval is already approved" });
  });
});

describe("readiness: the orchestrator's ping", () => {
  it("is ok while ping answers and names the orchestrator when it fails", async () => {
    const orchestrator = new InMemoryOrchestrator();
    expect(await runReadiness([pingCheck("orchestrator", orchestrator)], 500)).toMatchObject({
      ready: true,
      checks: { orchestrator: "ok" },
    });
    orchestrator.pingError = new Error("connect ECONNREFUSED 127.0.0.1:50051");
    const report = await runReadiness([pingCheck("orchestrator", orchestrator)], 500);
    expect(report).toMatchObject({ ready: false, failed: ["orchestrator"], checks: { orchestrator: "unavailable" } });
  });
});

describe("OpenAPI document", () => {
  it("lists every task route with its decisions and stays a valid OpenAPI 3.0 document", async () => {
    const res = await fetch(`${app.base}/api/v1/openapi.json`);
    const doc = (await res.json()) as Record<string, any>;
    await SwaggerParser.validate(structuredClone(doc) as never);
    const routes: [string, string][] = [
      ["/api/v1/tasks", "post"],
      ["/api/v1/tasks", "get"],
      ["/api/v1/tasks/stream", "post"],
      ["/api/v1/tasks/{id}", "get"],
      ["/api/v1/tasks/{id}/events", "get"],
      ["/api/v1/tasks/{id}/timeline", "get"],
      ["/api/v1/tasks/{id}/cancel", "post"],
      ["/api/v1/approvals/decision", "post"],
    ];
    for (const [path, method] of routes) {
      const op = doc.paths[path]?.[method];
      expect(op, `${method} ${path}`).toBeDefined();
      expect(op.description, `${method} ${path}`).toEqual(expect.any(String));
      expect(op.responses["401"]).toBeDefined();
    }
    const submit = doc.paths["/api/v1/tasks"].post;
    expect(submit.description).toContain("Query is required");
    expect(submit.responses["200"].headers).toHaveProperty("X-Workflow-ID");
    expect(submit.responses["200"].headers).toHaveProperty("X-Session-ID");
    expect(submit.responses["415"]).toBeDefined();
    expect(submit.parameters.map((p: { name: string }) => p.name)).toContain("Idempotency-Key");
    expect(doc.paths["/api/v1/tasks/stream"].post.security).toEqual([{ ApiKeyAuth: [] }, { bearerAuth: [] }]);
    expect(doc.paths["/api/v1/tasks"].get.security).toEqual([{ ApiKeyAuth: [] }]);
    const listParams = Object.fromEntries(
      doc.paths["/api/v1/tasks"].get.parameters.map((p: { name: string }) => [p.name, p]),
    );
    expect(listParams.limit.schema).toMatchObject({ type: "integer", minimum: 1, maximum: 100, default: 20 });
    expect(listParams.status.schema.enum).toContain("CANCELED");
    expect(doc.paths["/api/v1/tasks/{id}/cancel"].post.responses["409"].content["application/json"].schema).toEqual({
      $ref: "#/components/schemas/CancelConflict",
    });
    expect(doc.components.schemas.TaskSubmission.properties.context).toBeDefined();
    expect(doc.components.schemas.TaskContext.properties.require_approval).toBeDefined();
  });
});
