// Fuzz suite, part 4 (issue 11): POST /api/v1/auth/token and the web console's pages under
// /console, through the public port with authentication on. 1,000 generated requests.
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import type { E2eEnvironment } from "@tog/tests-e2e";
import {
  bodyOf,
  checkAnswer,
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
let token: string;

beforeAll(async () => {
  ({ env, key } = await startFuzzEnvironment(["gateway", "orchestrator", "console"], {
    env: { MAX_BODY_BYTES: "262144" },
  }));
  token = await env.accessToken("fuzz@example.com");
}, 120_000);
afterAll(async () => {
  await env?.close();
});

function tokenRequests(): fc.Arbitrary<FuzzRequest> {
  const body = bodyOf({ ttl_seconds: fc.oneof(fc.integer({ min: 60, max: 86_400 }), extremeNumber, nastyString) });
  const route = fc.oneof(
    {
      weight: 6,
      arbitrary: fc.tuple(
        fc.constant("POST"),
        fc.constantFrom("/auth/token", "/auth/token/", "/auth/token?x=1", "/auth/token?%00"),
        body,
      ),
    },
    {
      weight: 1,
      arbitrary: fc.tuple(
        fc.constantFrom("GET", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD", "FOO"),
        fc.constantFrom("/auth/token", "/auth", "/auth/x"),
        fc.constant(undefined),
      ),
    },
  );
  // Besides the key: a real bearer token, which may not mint tokens (401).
  const headers = fc
    .tuple(headersOf(key), fc.boolean())
    .map(([h, bearer]) => (bearer ? { ...h, Authorization: `Bearer ${token}` } : h));
  return fc
    .tuple(route, headers)
    .map(([[method, path, body], h]) => ({ method, path, headers: h, body: method === "HEAD" ? undefined : body }));
}

/** The console serves a page: redirects, the page (200), revalidation (304), ranges (206/416); errors as JSON. */
const CONSOLE_STATUSES = new Set([
  200, 204, 206, 304, 308, 400, 401, 403, 404, 405, 408, 412, 413, 415, 416, 417, 429, 431,
]);

/** Paths under /console (sent to `<router>/console`, so "" is /console itself). */
function consoleRequests(): fc.Arbitrary<FuzzRequest> {
  const segment = idSegment(["index.html", "config.json", "assets", "tasks", "favicon.ico"]);
  const path = fc.oneof(
    fc
      .tuple(fc.array(segment, { maxLength: 4 }), queryOf(["x", "q", "api_base_url"]))
      .map(([parts, q]) => `/${parts.join("/")}${q}`),
    fc.constantFrom(
      "",
      "/",
      "?x=1",
      "/assets/",
      "/assets/nope.js",
      "/../api/v1/health",
      "/%2e%2e/%2e%2e/etc/passwd",
      "/%00",
      "//config.json",
      "/config.json",
    ),
  );
  const extra = fc.constantFrom<Record<string, string>>(
    {},
    { Range: "bytes=0-10" },
    { Range: "bytes=999999999-" },
    { Range: "bytes=x" },
    { "If-None-Match": "*" },
    { "If-Modified-Since": "garbage" },
    { "If-Match": '"nope"' },
    { "Accept-Encoding": "gzip, br" },
  );
  return fc
    .tuple(
      fc.constantFrom("GET", "GET", "GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "FOO"),
      path,
      headersOf(key),
      extra,
      fc.option(nastyString, { nil: undefined }),
    )
    .map(([method, p, headers, more, body]) => ({
      method,
      path: p,
      headers: { ...headers, ...more },
      // Bodies stay under the console's 16 KiB limit: past it the console closes the connection
      // unread, and a body the router is still sending then ends in its 502 (libs/devstack
      // router-limits.test.ts covers that path); the API fuzz files send the large ones.
      body: method === "GET" || method === "HEAD" ? undefined : body?.slice(0, 8_000),
    }));
}

it("500 generated token requests: no 5xx, JSON errors with contract statuses, healthy after", async () => {
  const sent = await fuzz(env.baseUrl, tokenRequests(), 25, 20);
  expect(sent).toBe(500);
  await expectHealthy(env);
}, 600_000);

it("500 generated requests to /console: no 5xx, errors as JSON, healthy after", async () => {
  const sent = await fuzz(`${env.stack.router.url}/console`, consoleRequests(), 25, 20, (r, a) =>
    checkAnswer(r, a, CONSOLE_STATUSES),
  );
  expect(sent).toBe(500);
  await expectHealthy(env);
}, 600_000);
