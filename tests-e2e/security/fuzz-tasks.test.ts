// Fuzz suite, part 1 of 3 (issue 11): the task endpoints through the public port, with
// authentication on. 4,000 generated requests; see fuzz-support.ts for what each must satisfy.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { E2eEnvironment } from "@tog/tests-e2e";
import { createTask } from "../stream/support.ts";
import {
  bodyOf,
  expectHealthy,
  extremeNumber,
  fuzz,
  headersOf,
  idSegment,
  nastyString,
  queryOf,
  startFuzzEnvironment,
  type FuzzRequest,
} from "./fuzz-support.ts";

let env: E2eEnvironment;
let key: string;
const tasks: string[] = [];

beforeAll(async () => {
  ({ env, key } = await startFuzzEnvironment(["gateway", "orchestrator", "stream", "session"], {
    env: { MAX_BODY_BYTES: "262144" },
  }));
  for (let i = 0; i < 3; i++) tasks.push(await createTask(env.baseUrl, key));
}, 120_000);
afterAll(async () => {
  await env?.close();
});

function requests(): fc.Arbitrary<FuzzRequest> {
  const id = idSegment(tasks);
  const submit = bodyOf({
    query: fc.oneof(fc.string({ minLength: 1, maxLength: 50 }), nastyString),
    session_id: fc.oneof(fc.uuid(), nastyString),
    mode: fc.constantFrom("simple", "standard", "complex", "supervisor", "SIMPLE", ""),
    model_tier: fc.constantFrom("small", "medium", "large", "huge"),
    context: fc.dictionary(
      fc.oneof(
        fc.constantFrom("role", "history_window_size", "primers_count", "prompt_params", "disable_ai"),
        nastyString,
      ),
      fc.oneof(extremeNumber, nastyString, fc.jsonValue({ maxDepth: 3 })),
      { maxKeys: 4 },
    ),
  });
  const cancel = bodyOf({ reason: nastyString });
  const approval = bodyOf({
    workflow_id: id,
    approval_id: nastyString,
    approved: fc.oneof(fc.boolean(), nastyString),
    feedback: nastyString,
    approved_by: nastyString,
  });
  const route = fc.oneof(
    fc.tuple(fc.constant("POST"), fc.constant("/tasks"), submit),
    fc.tuple(fc.constant("POST"), fc.constant("/tasks/stream"), submit),
    fc.tuple(
      fc.constant("GET"),
      queryOf(["status", "limit", "offset", "session_id", "page", "sort"]).map((q) => `/tasks${q}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("GET"),
      id.map((i) => `/tasks/${i}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("GET"),
      fc.tuple(id, queryOf(["limit", "offset", "after_seq"])).map(([i, q]) => `/tasks/${i}/events${q}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("GET"),
      id.map((i) => `/tasks/${i}/timeline`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("POST"),
      id.map((i) => `/tasks/${i}/cancel`),
      cancel,
    ),
    fc.tuple(fc.constant("POST"), fc.constant("/approvals/decision"), approval),
    fc.tuple(
      fc.constantFrom("PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "PROPFIND", "FOO"),
      fc.constantFrom("/tasks", "/tasks/x", "/approvals/decision", "/health"),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constantFrom("GET", "POST"),
      fc.constantFrom("/health", "/readiness", "/openapi.json", "/nope", "/tasks/", "//tasks", "/tasks/../health"),
      fc.constant(undefined),
    ),
  );
  return fc.tuple(route, headersOf(key)).map(([[method, path, body], headers]) => ({ method, path, headers, body }));
}

it("4,000 generated task requests: no 5xx, JSON errors with contract statuses, healthy after", async () => {
  const sent = await fuzz(env.baseUrl, requests(), 200, 20);
  expect(sent).toBe(4_000);
  await expectHealthy(env);
}, 600_000);
