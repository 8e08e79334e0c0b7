// Submit a task and follow it live until it ends, then print the result.
//   TOG_BASE_URL=http://localhost:8080 TOG_API_KEY=sk_… node examples/submit-and-follow.ts "Explain SSE in one
// paragraph"
import { TogClient } from "@tog/sdk";

const tog = new TogClient({
  baseUrl: process.env.TOG_BASE_URL ?? "http://localhost:8080",
  apiKey: process.env.TOG_API_KEY,
});
const query = process.argv[2] ?? "Explain server-sent events in one paragraph";

const { task_id, session_id } = await tog.tasks.submit({ query, mode: "simple" });
console.log(`task ${task_id} (session ${session_id})`);

// Resumes by itself after a dropped connection; ends after the terminal event.
for await (const event of tog.stream(task_id)) {
  if (event.type === "LLM_PARTIAL") process.stdout.write(event.data.chunk);
  else if (event.type === "WORKFLOW_COMPLETED")
    console.log(`\n[done: ${event.data.total_tokens} tokens, $${event.data.total_cost_usd}]`);
  else console.log(`[${event.seq}] ${event.type}`);
}

const task = await tog.tasks.get(task_id);
console.log(`status: ${task.status}`);
process.exitCode = task.status === "TASK_STATUS_COMPLETED" ? 0 : 1;
