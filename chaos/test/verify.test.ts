// test-tier: e2e
// The verdict's split of task rows no client got an id for (docs/reliability.md "The report's
// columns"): a row carrying the idempotency identity of a submission that gave up was accepted
// after its client stopped waiting; any other is a duplicate. The identity the verdict computes
// must be the one the gateway stores, through the public router, with authentication on.
import { request, startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { newSubmission, submitUrl, taskBody, type Submission } from "../src/load.ts";
import { verify, type Submitter } from "../src/verify.ts";

let env: E2eEnvironment;
let apiKey: string;
let submitter: Submitter;

beforeAll(async () => {
  env = await startE2eEnvironment({ env: { GATEWAY_SKIP_AUTH: "0" }, only: ["gateway", "orchestrator"] });
  const created = await env.createApiKey({ user: "verdict@example.com", createUser: true });
  apiKey = created.key;
  submitter = { userId: created.user_id, baseUrl: env.baseUrl };
}, 120_000);
afterAll(async () => {
  await env?.close();
});

/** Submits `s` as the chaos load client does; returns the task id. */
async function submit(s: Submission, key = s.key): Promise<string> {
  const res = await request<{ task_id: string }>(submitUrl(env.baseUrl), {
    method: "POST",
    headers: { "X-API-Key": apiKey, "Content-Type": "application/json", "Idempotency-Key": key },
    body: JSON.stringify(taskBody(s)),
  });
  expect(res.status, res.text).toBe(200);
  return res.body.task_id;
}

describe("the verdict's task rows without a client", () => {
  it("tells a submit accepted after its client gave up from a duplicate task", async () => {
    const answered = newSubmission("simple");
    answered.taskId = await submit(answered);
    const gaveUp = newSubmission("write");
    await submit(gaveUp); // accepted, but its client never saw the answer: no taskId kept
    const url = env.database.url;

    expect(await verify(url, [answered, gaveUp], submitter)).toMatchObject({
      refused: 1,
      acceptedAfterGivingUp: 1,
      duplicateTasks: 0,
    });

    // A row whose identity belongs to no submission of the run: a duplicate.
    await submit(newSubmission("simple"), "a key no submission of the run used");
    expect(await verify(url, [answered, gaveUp], submitter)).toMatchObject({
      acceptedAfterGivingUp: 1,
      duplicateTasks: 1,
    });
    // The identity is the user's too: for another user the same rows are duplicates.
    expect(await verify(url, [answered, gaveUp], { ...submitter, userId: "someone else" })).toMatchObject({
      acceptedAfterGivingUp: 0,
      duplicateTasks: 2,
    });
  }, 60_000);
});
