// Two turns in one session (your own session id), then the session's turns, a new title, and
// a soft delete.
//   node examples/sessions.ts
import { TogClient } from "@tog/sdk";

const tog = new TogClient({
  baseUrl: process.env.TOG_BASE_URL ?? "http://localhost:8080",
  apiKey: process.env.TOG_API_KEY,
});
const sessionId = `example-${Date.now()}`;

for (const query of ["My favourite colour is teal. Remember it.", "What is my favourite colour?"]) {
  const { task_id } = await tog.tasks.submit({ query, mode: "simple", session_id: sessionId });
  const task = await tog.tasks.waitUntilDone(task_id, { intervalMs: 500, timeoutMs: 120_000 });
  console.log(`> ${query}\n${task.result ?? task.error}\n`);
}

const session = await tog.sessions.get(sessionId);
console.log(
  `session ${session.session_id} (${session.external_id}): ${session.task_count} tasks, ${session.tokens_used} tokens`,
);
for await (const turn of tog.sessions.turns(sessionId))
  console.log(`turn ${turn.turn}: ${turn.user_query} → ${turn.final_output.slice(0, 60)}`);

const renamed = await tog.sessions.rename(sessionId, "Favourite colour");
console.log(`renamed to "${renamed.title}"`);
await tog.sessions.delete(sessionId);
console.log("deleted");
