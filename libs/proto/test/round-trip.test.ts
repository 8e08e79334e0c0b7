import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type {
  ApprovalDecisionCommand,
  ListTasksQuery,
  SubmitTaskCommand,
  TaskDetail,
  TaskEventsQuery,
  TimelineResult,
} from "@tog/proto";
import { startHarness, type Harness } from "./helpers.ts";

// Every DTO field crosses the wire and comes back the same, in both directions: values
// set, nullable ones null, optional ones absent, and empty strings kept as empty strings.

let h: Harness;
beforeAll(async () => {
  h = await startHarness();
});
afterAll(() => h.close());
beforeEach(() => {
  h.fake.calls.length = 0;
});

const lastArgs = () => h.fake.calls.at(-1)?.args;

const fullTask: TaskDetail = {
  taskId: "0b6f9c1e-8d2a-4c3b-9f7e-1a2b3c4d5e6f",
  userId: "user-1",
  sessionId: "5e0c4b3a-2f1d-4e6c-8b9a-0f1e2d3c4b5a",
  query: "Summarise ü and ✓",
  status: "COMPLETED",
  mode: "EXECUTION_MODE_COMPLEX",
  requestedMode: "supervisor",
  result: "done",
  error: "",
  errorType: "provider_error",
  modelUsed: "gpt-4o-mini",
  provider: "openai",
  usage: { inputTokens: 120, outputTokens: 45, totalTokens: 165, costUsd: 0.000123 },
  createdAt: "2025-01-02T03:04:05.678Z",
  updatedAt: "2025-01-02T03:04:09.000Z",
  startedAt: "2025-01-02T03:04:06.000Z",
  completedAt: "2025-01-02T03:04:09.000Z",
};

const bareTask: TaskDetail = {
  ...fullTask,
  status: "QUEUED",
  mode: null,
  requestedMode: null,
  result: null,
  error: "",
  errorType: null,
  modelUsed: null,
  provider: null,
  usage: null,
  startedAt: null,
  completedAt: null,
};

describe("SubmitTask", () => {
  it("carries every command field, the context as exact JSON, and the result", async () => {
    const command: SubmitTaskCommand = {
      userId: "user-1",
      query: "What is 2+2?",
      sessionId: "my-external-session",
      mode: "supervisor",
      context: {
        role: "analyst",
        n: 3,
        ratio: 1.5,
        big: 9_007_199_254_740_991,
        nested: { list: [1, "ü", null] },
        none: null,
      },
      streaming: true,
    };
    const result = {
      taskId: "t-1",
      sessionId: "s-uuid",
      sessionRef: "my-external-session",
      status: "QUEUED" as const,
      createdAt: "2025-01-02T03:04:05.678Z",
    };
    h.fake.behaviour.submitTask = async () => result;
    expect(await h.client.submitTask(command)).toStrictEqual(result);
    expect(lastArgs()).toEqual([command]);
    const received = lastArgs()?.[0] as SubmitTaskCommand;
    expect(Number.isInteger(received.context.n)).toBe(true);
    expect(received.context.big).toBe(9_007_199_254_740_991);
  });

  it("leaves an absent session and mode absent (new session, automatic mode)", async () => {
    h.fake.behaviour.submitTask = async () => ({
      taskId: "t",
      sessionId: "s",
      sessionRef: "s",
      status: "QUEUED",
      createdAt: "x",
    });
    await h.client.submitTask({ userId: "u", query: "q", context: {}, streaming: false });
    const received = lastArgs()?.[0] as SubmitTaskCommand;
    expect(received).toEqual({ userId: "u", query: "q", context: {}, streaming: false });
    expect(received.sessionId).toBeUndefined();
    expect(received.mode).toBeUndefined();
  });

  it("keeps an empty-string session id (present, not absent)", async () => {
    h.fake.behaviour.submitTask = async () => ({
      taskId: "t",
      sessionId: "s",
      sessionRef: "",
      status: "QUEUED",
      createdAt: "x",
    });
    const res = await h.client.submitTask({ userId: "u", query: "q", sessionId: "", context: {}, streaming: false });
    expect((lastArgs()![0] as SubmitTaskCommand).sessionId).toBe("");
    expect(res.sessionRef).toBe("");
  });

  it.each(["simple", "standard", "complex", "supervisor"] as const)("carries mode %s", async (mode) => {
    h.fake.behaviour.submitTask = async () => ({
      taskId: "t",
      sessionId: "s",
      sessionRef: "s",
      status: "QUEUED",
      createdAt: "x",
    });
    await h.client.submitTask({ userId: "u", query: "q", mode, context: {}, streaming: false });
    expect((lastArgs()![0] as SubmitTaskCommand).mode).toBe(mode);
  });
});

describe("GetTask", () => {
  it.each([
    ["every field set", fullTask],
    ["nullable fields null", bareTask],
  ])("returns a task with %s", async (_label, task) => {
    h.fake.behaviour.getTask = async () => task;
    expect(await h.client.getTask("user-1", task.taskId)).toStrictEqual(task);
    expect(lastArgs()).toEqual(["user-1", task.taskId]);
  });

  it("keeps an empty result and zero usage as values, not null", async () => {
    const task: TaskDetail = {
      ...bareTask,
      result: "",
      usage: { inputTokens: 0, outputTokens: 0, totalTokens: 0, costUsd: 0 },
    };
    h.fake.behaviour.getTask = async () => task;
    expect(await h.client.getTask("u", "t")).toStrictEqual(task);
  });

  it.each(["QUEUED", "RUNNING", "COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"] as const)(
    "carries status %s",
    async (status) => {
      h.fake.behaviour.getTask = async () => ({ ...fullTask, status });
      expect((await h.client.getTask("u", "t")).status).toBe(status);
    },
  );
});

describe("ListTasks", () => {
  it("carries the query with filters and returns the page", async () => {
    const query: ListTasksQuery = {
      userId: "user-1",
      limit: 20,
      offset: 40,
      status: "RUNNING",
      sessionId: "ext-session",
    };
    h.fake.behaviour.listTasks = async () => ({ tasks: [fullTask, bareTask], totalCount: 42 });
    expect(await h.client.listTasks(query)).toStrictEqual({ tasks: [fullTask, bareTask], totalCount: 42 });
    expect(lastArgs()).toEqual([query]);
  });

  it("leaves absent filters absent and returns an empty page", async () => {
    h.fake.behaviour.listTasks = async () => ({ tasks: [], totalCount: 0 });
    expect(await h.client.listTasks({ userId: "u", limit: 10, offset: 0 })).toStrictEqual({ tasks: [], totalCount: 0 });
    const received = lastArgs()?.[0] as ListTasksQuery;
    expect(received).toEqual({ userId: "u", limit: 10, offset: 0 });
    expect(received.status).toBeUndefined();
    expect(received.sessionId).toBeUndefined();
  });
});

describe("CancelTask", () => {
  it("carries the reason and an accepted result", async () => {
    h.fake.behaviour.cancelTask = async () => ({
      accepted: true,
      status: "RUNNING",
      message: "Cancellation requested",
    });
    expect(await h.client.cancelTask("u", "t", "user asked")).toStrictEqual({
      accepted: true,
      status: "RUNNING",
      message: "Cancellation requested",
    });
    expect(lastArgs()).toEqual(["u", "t", "user asked"]);
  });

  it("leaves an absent reason absent and carries a refused result", async () => {
    h.fake.behaviour.cancelTask = async () => ({
      accepted: false,
      status: "COMPLETED",
      message: "Task already finished",
    });
    expect(await h.client.cancelTask("u", "t", undefined)).toStrictEqual({
      accepted: false,
      status: "COMPLETED",
      message: "Task already finished",
    });
    expect(lastArgs()).toEqual(["u", "t", undefined]);
  });
});

describe("DecideApproval", () => {
  it("carries every field of an approval", async () => {
    const command: ApprovalDecisionCommand = {
      userId: "u",
      taskId: "wf",
      approvalId: "ap-1",
      approved: true,
      feedback: "looks good",
      modifiedAction: "rm -i",
      runId: "run-1",
      approvedBy: "alice",
    };
    h.fake.behaviour.decideApproval = async () => ({
      taskId: "wf",
      approvalId: "ap-1",
      runId: "run-1",
      decision: "approved",
    });
    expect(await h.client.decideApproval(command)).toStrictEqual({
      taskId: "wf",
      approvalId: "ap-1",
      runId: "run-1",
      decision: "approved",
    });
    expect(lastArgs()).toEqual([command]);
  });

  it("leaves absent optional fields absent and carries a denial", async () => {
    const command: ApprovalDecisionCommand = {
      userId: "u",
      taskId: "wf",
      approvalId: "ap-2",
      approved: false,
      approvedBy: "bob",
    };
    h.fake.behaviour.decideApproval = async () => ({
      taskId: "wf",
      approvalId: "ap-2",
      runId: "",
      decision: "denied",
    });
    expect(await h.client.decideApproval(command)).toStrictEqual({
      taskId: "wf",
      approvalId: "ap-2",
      runId: "",
      decision: "denied",
    });
    const received = lastArgs()?.[0] as ApprovalDecisionCommand;
    expect(received).toEqual(command);
    expect([received.feedback, received.modifiedAction, received.runId]).toEqual([undefined, undefined, undefined]);
  });
});

describe("GetTaskEvents", () => {
  it("carries the seq cursor and returns the exact event texts", async () => {
    // Key order and spacing must survive: the HTTP layer serves these texts verbatim.
    const events = ['{"seq":1,"type":"WORKFLOW_STARTED","data":{"z":1,"a":"ü"}}', '{"seq":2,  "type":"LLM_PARTIAL"}'];
    const query: TaskEventsQuery = { userId: "u", taskId: "t", limit: 50, offset: 0, afterSeq: 0 };
    h.fake.behaviour.getTaskEvents = async () => ({ events, totalCount: 7 });
    expect(await h.client.getTaskEvents(query)).toStrictEqual({ events, totalCount: 7 });
    expect(lastArgs()).toEqual([query]);
    expect((lastArgs()![0] as TaskEventsQuery).afterSeq).toBe(0);
  });

  it("leaves an absent cursor absent", async () => {
    h.fake.behaviour.getTaskEvents = async () => ({ events: [], totalCount: 0 });
    expect(await h.client.getTaskEvents({ userId: "u", taskId: "t", limit: 200, offset: 10 })).toStrictEqual({
      events: [],
      totalCount: 0,
    });
    expect((lastArgs()![0] as TaskEventsQuery).afterSeq).toBeUndefined();
  });
});

describe("GetTimeline", () => {
  it("carries every entry field, payloads as JSON (null included), absent payloads absent", async () => {
    const timeline: TimelineResult = {
      taskId: "wf",
      status: "RUNNING",
      entries: [
        {
          seq: 1,
          kind: "step",
          name: "plan",
          agentId: "planner",
          status: "completed",
          startedAt: "2025-01-02T03:04:05.000Z",
          completedAt: "2025-01-02T03:04:06.500Z",
          durationMs: 1500,
          parent: "root",
          payload: { output: { n: 1, f: 0.5, s: "ü" }, list: [1, 2] },
        },
        {
          seq: 2,
          kind: "approval",
          name: "approve",
          agentId: "orchestrator",
          status: "pending",
          startedAt: "2025-01-02T03:04:07.000Z",
          completedAt: null,
          durationMs: null,
          parent: null,
          payload: null,
        },
        {
          seq: 3,
          kind: "signal",
          name: "cancel",
          agentId: "",
          status: "received",
          startedAt: "2025-01-02T03:04:08.000Z",
          completedAt: null,
          durationMs: 0,
          parent: null,
        },
      ],
    };
    h.fake.behaviour.getTimeline = async () => timeline;
    const got = await h.client.getTimeline({ userId: "u", taskId: "wf", includePayloads: true });
    expect(got).toStrictEqual(timeline);
    expect("payload" in got.entries[1]!).toBe(true);
    expect("payload" in got.entries[2]!).toBe(false);
    expect(lastArgs()).toEqual([{ userId: "u", taskId: "wf", includePayloads: true }]);
  });

  it("carries include_payloads=false and an empty timeline", async () => {
    h.fake.behaviour.getTimeline = async () => ({ taskId: "wf", status: "QUEUED", entries: [] });
    expect(await h.client.getTimeline({ userId: "u", taskId: "wf", includePayloads: false })).toStrictEqual({
      taskId: "wf",
      status: "QUEUED",
      entries: [],
    });
    expect(lastArgs()).toEqual([{ userId: "u", taskId: "wf", includePayloads: false }]);
  });
});

describe("Ping", () => {
  it("resolves when the implementation answers", async () => {
    h.fake.behaviour.ping = async () => {};
    await expect(h.client.ping()).resolves.toBeUndefined();
    expect(h.fake.calls.at(-1)?.method).toBe("ping");
  });
});
