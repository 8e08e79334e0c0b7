import { describe, expect, it } from "vitest";
import { WorkflowFailure } from "../../src/runtime/flow-context.ts";
import { taskWorkflow } from "../../src/flows/index.ts";
import { invalidPayloads, type ApprovalAnswer } from "./memory-context.ts";
import { counted, memoryRun, ofType, types } from "./setup.ts";

describe("task approval (require_approval)", () => {
  it("waits for the approval before any agent work", async () => {
    const r = memoryRun({ spec: { query: "Hello there", mode: "simple", requireApproval: true } });
    const { outcome } = await r.run(taskWorkflow);
    expect(invalidPayloads(r.events)).toEqual([]);
    expect(types(r.events).slice(0, 5)).toEqual([
      "WORKFLOW_STARTED",
      "APPROVAL_REQUESTED",
      "WAITING",
      "APPROVAL_DECISION",
      "AGENT_STARTED",
    ]);
    expect(r.approvals).toEqual([
      {
        key: "task",
        toolName: "agent",
        operation: "execute task",
        riskLevel: "medium",
        details: { query: "Hello there", mode: "simple" },
      },
    ]);
    expect(outcome?.result).toContain("Hello there");
  });

  for (const [decision, errorType] of [
    ["denied", "APPROVAL_DENIED"],
    ["timeout", "APPROVAL_TIMEOUT"],
  ] as const) {
    it(`${decision} → WorkflowFailure ${errorType}, nothing run`, async () => {
      const deps = counted();
      const r = memoryRun(
        { spec: { query: "Hello there", requireApproval: true }, approve: () => ({ decision, comments: "not now" }) },
        deps,
      );
      const { failure } = await r.run(taskWorkflow);
      expect(failure).toBeInstanceOf(WorkflowFailure);
      expect((failure as WorkflowFailure).errorType).toBe(errorType);
      if (decision === "denied")
        expect((failure as WorkflowFailure).message).toBe("Task was denied by reviewer: not now");
      expect(types(r.events)).toEqual(["WORKFLOW_STARTED", "APPROVAL_REQUESTED", "WAITING", "APPROVAL_DECISION"]);
      expect(deps.calls).toEqual({ llm: 0, tools: 0 });
    });
  }

  it("passes modified_action to the agents as the approver's instruction", async () => {
    const r = memoryRun({
      spec: { query: "Hello there", mode: "simple", requireApproval: true },
      approve: () => ({ decision: "approved", modifiedAction: "Answer in one sentence." }),
    });
    await r.run(taskWorkflow);
    expect(ofType(r.events, "LLM_PROMPT")[0]?.data.sanitized_prompt).toContain(
      "[system] Instruction from the approver of this task: Answer in one sentence.",
    );
  });

  it("a replay reuses the recorded decision", async () => {
    let asked = 0;
    const approve = (): ApprovalAnswer => {
      asked++;
      return { decision: "approved" };
    };
    const r1 = memoryRun({ spec: { query: "Hello there", requireApproval: true }, approve });
    await r1.run(taskWorkflow);
    const r2 = memoryRun({
      spec: { query: "Hello there", requireApproval: true },
      approve,
      checkpoints: r1.checkpoints,
    });
    await r2.run(taskWorkflow);
    expect(asked).toBe(1);
  });
});

describe("tool approval (risk ≥ approvalThreshold)", () => {
  const query = "What is 12*(3+4)?";

  it("asks before running a tool at the threshold, then runs it", async () => {
    const r = memoryRun({ spec: { query, mode: "standard" }, settings: { approvalThreshold: "low" } });
    const { outcome } = await r.run(taskWorkflow);
    expect(invalidPayloads(r.events)).toEqual([]);
    expect(r.approvals).toEqual([
      {
        key: "tool:0.0",
        toolName: "calculator",
        operation: "invoke calculator",
        riskLevel: "low",
        details: { agent_id: "generalist", tool_args: { expression: "12*(3+4)" } },
      },
    ]);
    const order = types(r.events);
    expect(order.indexOf("APPROVAL_DECISION")).toBeLessThan(order.indexOf("TOOL_INVOKED"));
    expect(outcome?.result).toContain("84");
  });

  it("does not ask below the threshold", async () => {
    const r = memoryRun({ spec: { query, mode: "standard" }, settings: { approvalThreshold: "high" } });
    await r.run(taskWorkflow);
    expect(r.approvals).toEqual([]);
  });

  it("modified_action that parses as a JSON object replaces the arguments", async () => {
    const r = memoryRun({
      spec: { query, mode: "standard" },
      settings: { approvalThreshold: "low" },
      approve: () => ({ decision: "approved", modifiedAction: '{"expression":"2+2"}' }),
    });
    const { outcome } = await r.run(taskWorkflow);
    expect(ofType(r.events, "TOOL_INVOKED")[0]?.data.tool_args).toEqual({ expression: "2+2" });
    expect(outcome?.result).toContain("= 4");
  });

  it("other modified_action text is not run: the model gets it as an instruction", async () => {
    const deps = counted();
    const r = memoryRun(
      {
        spec: { query, mode: "standard" },
        settings: { approvalThreshold: "low" },
        approve: () => ({ decision: "approved", modifiedAction: "Estimate it mentally instead" }),
      },
      deps,
    );
    const { outcome } = await r.run(taskWorkflow);
    expect(ofType(r.events, "TOOL_INVOKED")).toEqual([]);
    expect(deps.calls.tools).toBe(0);
    expect(outcome?.toolsInvoked).toBe(0);
    expect(outcome?.result).toContain("Estimate it mentally instead");
  });

  it("a denied tool call fails the task with APPROVAL_DENIED after AGENT_FAILED", async () => {
    const deps = counted();
    const r = memoryRun(
      {
        spec: { query, mode: "standard" },
        settings: { approvalThreshold: "low" },
        approve: () => ({ decision: "denied", approvedBy: "alice" }),
      },
      deps,
    );
    const { failure } = await r.run(taskWorkflow);
    expect((failure as WorkflowFailure).errorType).toBe("APPROVAL_DENIED");
    expect((failure as WorkflowFailure).message).toBe("Tool call calculator was denied by alice");
    expect(r.events.at(-1)).toMatchObject({
      type: "AGENT_FAILED",
      agent_id: "generalist",
      data: { error: "APPROVAL_DENIED", error_message: "Tool call calculator was denied by alice", recoverable: false },
    });
    expect(invalidPayloads(r.events)).toEqual([]);
    expect(deps.calls.tools).toBe(0);
  });

  it("a timed-out tool approval fails with APPROVAL_TIMEOUT, also from a subtask of a complex run", async () => {
    const r = memoryRun({
      spec: { query: "What is 12*(3+4)? Then explain the result", mode: "complex" },
      settings: { approvalThreshold: "low" },
      approve: () => ({ decision: "timeout" }),
    });
    const { failure } = await r.run(taskWorkflow);
    expect((failure as WorkflowFailure).errorType).toBe("APPROVAL_TIMEOUT");
    expect(ofType(r.events, "AGENT_FAILED").map((e) => e.agent_id)).toEqual(["agent-task-1"]);
  });
});
