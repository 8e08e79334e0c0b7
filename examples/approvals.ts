// A task that waits for a human approval: watch its events, approve when asked, see it finish.
//   node examples/approvals.ts [--deny]
import { TogClient } from "@tog/sdk";

const tog = new TogClient({
  baseUrl: process.env.TOG_BASE_URL ?? "http://localhost:8080",
  apiKey: process.env.TOG_API_KEY,
});
const approve = !process.argv.includes("--deny");

// `require_approval` in the context asks the task to pause for a decision.
const { task_id } = await tog.tasks.submit({
  query: "Summarize the release plan",
  mode: "simple",
  context: { require_approval: true },
});
console.log(`task ${task_id}`);

for await (const event of tog.stream(task_id, {
  types: ["APPROVAL_REQUESTED", "APPROVAL_DECISION", "WORKFLOW_COMPLETED", "ERROR_OCCURRED"],
})) {
  switch (event.type) {
    case "APPROVAL_REQUESTED": {
      console.log(
        `approval requested: ${event.data.tool_name} (${event.data.risk_level}), id ${event.data.approval_id}`,
      );
      const result = await tog.approvals.decide({
        taskId: task_id,
        approvalId: event.data.approval_id,
        approved: approve,
        feedback: "decided by examples/approvals.ts",
      });
      console.log(`decision sent: ${result.message}`);
      break;
    }
    case "APPROVAL_DECISION":
      console.log(`decision recorded: ${event.data.decision}`);
      break;
    default:
      console.log(`${event.type}${event.status ? ` (${event.status})` : ""}`);
  }
}
const task = await tog.tasks.get(task_id);
console.log(`status: ${task.status}`);
