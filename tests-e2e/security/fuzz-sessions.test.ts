// Fuzz suite, part 2 of 3 (issue 11): the session endpoints and odd requests to every group,
// through the public port with authentication on. 3,000 generated requests.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { request, type E2eEnvironment } from "@tog/tests-e2e";
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
const sessions: string[] = [];

beforeAll(async () => {
  ({ env, key } = await startFuzzEnvironment(["gateway", "orchestrator", "session"], {
    env: { MAX_BODY_BYTES: "262144" },
  }));
  for (const sessionId of ["fuzz-session", "another one"]) {
    const res = await request<{ session_id: string }>(`${env.baseUrl}/tasks`, {
      method: "POST",
      headers: { "Content-Type": "application/json", "X-API-Key": key },
      body: JSON.stringify({ query: "hello", session_id: sessionId }),
    });
    sessions.push(encodeURIComponent(sessionId), res.body.session_id);
  }
}, 120_000);
afterAll(async () => {
  await env?.close();
});

function requests(): fc.Arbitrary<FuzzRequest> {
  const id = idSegment(sessions);
  const patch = bodyOf({ title: fc.oneof(fc.string({ maxLength: 80 }), nastyString), extra: extremeNumber });
  const route = fc.oneof(
    fc.tuple(
      fc.constant("GET"),
      queryOf(["limit", "offset", "cursor", "sort"]).map((q) => `/sessions${q}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("GET"),
      id.map((i) => `/sessions/${i}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("GET"),
      fc.tuple(id, queryOf(["limit", "offset", "before", "after"])).map(([i, q]) => `/sessions/${i}/history${q}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("GET"),
      fc.tuple(id, queryOf(["limit", "offset", "include_payload"])).map(([i, q]) => `/sessions/${i}/events${q}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constant("PATCH"),
      id.map((i) => `/sessions/${i}`),
      patch,
    ),
    fc.tuple(
      fc.constant("DELETE"),
      fc.uuid().map((i) => `/sessions/${i}`),
      fc.constant(undefined),
    ),
    fc.tuple(
      fc.constantFrom("PUT", "POST", "OPTIONS", "HEAD", "TRACE", "MKCOL"),
      fc.constantFrom("/sessions", "/sessions/x", "/sessions/x/history"),
      fc.option(patch, { nil: undefined }),
    ),
  );
  return fc.tuple(route, headersOf(key)).map(([[method, path, body], headers]) => ({
    method,
    path,
    headers,
    // HEAD and TRACE carry no body (RFC 9110 9.3.2, 9.3.8); Node's client cannot read the answer to one that does.
    body: method === "HEAD" || method === "TRACE" ? undefined : (body ?? undefined),
  }));
}

it("3,000 generated session requests: no 5xx, JSON errors with contract statuses, healthy after", async () => {
  const sent = await fuzz(env.baseUrl, requests(), 150, 20);
  expect(sent).toBe(3_000);
  await expectHealthy(env);
}, 600_000);
