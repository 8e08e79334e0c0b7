// The session token budget end to end: a small SESSION_TOKEN_BUDGET on the orchestrator, tasks
// in one session until one is refused with BUDGET_EXCEEDED.
import { randomUUID } from "node:crypto";
import { afterAll, beforeAll, expect, it } from "vitest";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import { allEvents, get, newClient, type Client, type Json } from "../tasks/support.ts";
import { session, turn } from "./support.ts";

const BUDGET = 1_500;

let env: E2eEnvironment;
let alice: Client;

beforeAll(async () => {
  env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    services: { orchestrator: { SESSION_TOKEN_BUDGET: String(BUDGET) } },
    only: ["gateway", "session", "orchestrator", "worker"],
  });
  alice = await newClient(env, "alice");
}, 120_000);
afterAll(async () => {
  await env?.close();
});

it("a task that would exceed the session's token budget fails with ERROR_OCCURRED BUDGET_EXCEEDED", async () => {
  const ext = `budget-${randomUUID()}`;
  const completed: Json[] = [];
  let refused: Json | undefined;
  for (let i = 0; i < 20 && !refused; i++) {
    const { task } = await turn(alice, {
      query: `Tell me fact number ${i} about ${"oceans ".repeat(20)}`,
      session_id: ext,
      mode: "simple",
    });
    if (task.status === "TASK_STATUS_COMPLETED") completed.push(task);
    else refused = task;
  }
  expect(completed.length).toBeGreaterThan(0);
  expect(refused).toBeDefined();
  expect(refused).toMatchObject({
    status: "TASK_STATUS_FAILED",
    error: expect.stringMatching(/^Session token budget exceeded: /),
  });

  const events = await allEvents(alice, refused!.task_id);
  const terminal = events.at(-1)!;
  expect(terminal).toMatchObject({
    type: "ERROR_OCCURRED",
    message: refused!.error,
    data: { error_type: "BUDGET_EXCEEDED", terminal: true, status: "FAILED", recoverable: false },
  });
  expect(events[0]!.type).toBe("WORKFLOW_STARTED");
  expect(events.some((e) => e.type === "LLM_OUTPUT")).toBe(false);

  const detail = (await session(alice, ext)).body;
  const used = completed.reduce((n, t) => n + (t.usage.total_tokens as number), 0);
  expect(detail).toMatchObject({ token_budget: BUDGET, tokens_used: used, task_count: completed.length + 1 });
  const history = (await session(alice, ext, "/history")).body;
  expect(history.tasks.at(-1)).toMatchObject({
    task_id: refused!.task_id,
    status: "TASK_STATUS_FAILED",
    error_type: "BUDGET_EXCEEDED",
  });

  // A new session has its own budget.
  expect((await turn(alice, { query: "Say hello", mode: "simple" })).task.status).toBe("TASK_STATUS_COMPLETED");
  expect((await get(alice, "/sessions")).body.total_count).toBe(2);
});
