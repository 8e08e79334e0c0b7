// Property-based fuzzing of the public port (issue 11): fast-check generates requests as an
// attacker or a careless client would send them; every answer must be a non-5xx status from the
// contract, and every error a JSON `{"error": "..."}`. Requests go out in batches (one fast-check
// run = one batch sent concurrently), so 10,000 requests fit in a bounded time. fast-check prints
// the seed and path of a failing run; E2E_FUZZ_SEED replays it.
import http from "node:http";
import fc from "fast-check";
import { expect } from "vitest";
import { e2eConfig, request, startE2eEnvironment, type E2eEnvironment, type E2eOptions } from "@tog/tests-e2e";

/**
 * The system every fuzz file attacks: the services it names, authentication on, limits high
 * enough that rate limiting is not what answers, and one user with an API key.
 */
export async function startFuzzEnvironment(
  only: string[],
  extra: Pick<E2eOptions, "services"> & { env?: Record<string, string> } = {},
): Promise<{ env: E2eEnvironment; key: string }> {
  const env = await startE2eEnvironment({
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "1000000", RATE_LIMIT_BURST: "100000", ...extra.env },
    only,
    ...(extra.services ? { services: extra.services } : {}),
  });
  const key = (await env.createApiKey({ user: "fuzz@example.com", createUser: true })).key;
  return { env, key };
}

export interface FuzzRequest {
  method: string;
  path: string;
  headers: Record<string, string>;
  body?: string | undefined;
}

export interface FuzzAnswer {
  status: number;
  contentType: string;
  body: string;
}

/** Statuses docs/api.md ("Errors", the operations) and docs/security.md allow for a client's request. */
export const CONTRACT_STATUSES = new Set([
  200, 201, 202, 204, 400, 401, 403, 404, 405, 409, 413, 415, 417, 426, 429, 431,
]);

/** Sends one request through the public router; event streams are cut after their headers. */
export function send(baseUrl: string, r: FuzzRequest, agent: http.Agent): Promise<FuzzAnswer> {
  const url = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const req = http.request(
      {
        agent,
        hostname: url.hostname,
        port: url.port,
        method: r.method,
        path: `${url.pathname}${r.path}`,
        // Node's client sends a GET/DELETE/OPTIONS body unframed (no Content-Length, no chunking),
        // which no real client does: the server then reads the body as the next request on the
        // connection. Frame every body as fetch and curl do.
        headers:
          r.body === undefined ? r.headers : { ...r.headers, "Content-Length": String(Buffer.byteLength(r.body)) },
        timeout: 30_000,
      },
      (res) => {
        const contentType = String(res.headers["content-type"] ?? "");
        if (contentType.startsWith("text/event-stream")) {
          res.destroy();
          resolve({ status: res.statusCode ?? 0, contentType, body: "" });
          return;
        }
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () =>
          resolve({ status: res.statusCode ?? 0, contentType, body: Buffer.concat(chunks).toString("utf8") }),
        );
        res.on("error", reject);
      },
    );
    req.on("timeout", () => req.destroy(new Error(`no answer within 30 s: ${r.method} ${r.path}`)));
    req.on("error", (err: Error) =>
      reject(
        new Error(
          `${r.method} ${r.path.slice(0, 200)} ${JSON.stringify(r.headers)} body ${String(r.body?.length)}: ${err.message}`,
          { cause: err },
        ),
      ),
    );
    req.end(r.body);
  });
}

/** The assertion every answer must pass; `statuses`: those allowed (the API's by default). */
export function checkAnswer(r: FuzzRequest, a: FuzzAnswer, statuses: ReadonlySet<number> = CONTRACT_STATUSES): void {
  const sent = r.body === undefined ? "" : ` body ${JSON.stringify(String(r.body).slice(0, 300))}`;
  const what = `${r.method} ${r.path.slice(0, 200)}${sent} → ${a.status} ${a.body.slice(0, 200)}`;
  expect(statuses.has(a.status), what).toBe(true);
  if (a.status >= 400 && r.method !== "HEAD") {
    expect(a.contentType, what).toMatch(/^application\/json/);
    const parsed = JSON.parse(a.body) as Record<string, unknown>;
    // The one error body of another shape: cancel's 409 (OpenAPI `cancelTask`).
    if (a.status === 409 && /^\/tasks\/[^/]+\/cancel$/.test(r.path)) expect(parsed.success, what).toBe(false);
    else expect(typeof parsed.error, what).toBe("string");
  }
}

/** Runs `batches` fast-check runs of `batchSize` concurrent requests each; returns how many were sent. */
export async function fuzz(
  baseUrl: string,
  arbitrary: fc.Arbitrary<FuzzRequest>,
  batches: number,
  batchSize: number,
  check: (r: FuzzRequest, a: FuzzAnswer) => void = checkAnswer,
): Promise<number> {
  const agent = new http.Agent({ keepAlive: true, maxSockets: batchSize });
  let sent = 0;
  try {
    await fc.assert(
      fc.asyncProperty(fc.array(arbitrary, { minLength: batchSize, maxLength: batchSize }), async (batch) => {
        const answers = await Promise.all(batch.map((r) => send(baseUrl, r, agent)));
        sent += batch.length;
        batch.forEach((r, i) => check(r, answers[i]!));
      }),
      {
        numRuns: batches,
        endOnFailure: true,
        ...(e2eConfig.E2E_FUZZ_SEED !== undefined ? { seed: e2eConfig.E2E_FUZZ_SEED } : {}),
        // A short report: the seed to replay (E2E_FUZZ_SEED) and the failed assertion, not the
        // whole batch (its bodies can be 200 KB each).
        reporter: (out) => {
          if (!out.failed) return;
          const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
          throw new Error(
            `fuzz failure after ${out.numRuns} batches; replay with E2E_FUZZ_SEED=${out.seed} (path ${out.counterexamplePath ?? "?"}): ${cause.slice(0, 2_000)}`,
          );
        },
      },
    );
  } finally {
    agent.destroy();
  }
  return sent;
}

/** After the storm: every service still runs and the system reports healthy and ready. */
export async function expectHealthy(env: E2eEnvironment): Promise<void> {
  for (const s of env.stack.services) expect(s.isRunning, `${s.name} still runs`).toBe(true);
  expect((await request(`${env.baseUrl}/health`)).status).toBe(200);
  expect((await request(`${env.baseUrl}/readiness`)).status).toBe(200);
}

// ---- arbitraries -------------------------------------------------------------------------------

/** Strings a careless or hostile client sends: NUL, lone surrogates, huge, unicode, numbers as text. */
export const nastyString: fc.Arbitrary<string> = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: "binary", maxLength: 40 }),
  fc.constantFrom(
    "\u0000",
    "a\u0000b",
    "\ud800",
    "\udfff",
    "x\ud83d",
    "\u202e",
    "' OR 1=1 --",
    "${jndi:x}",
    "../../etc/passwd",
    "null",
    "-1",
    "1e309",
  ),
  fc.integer({ min: 1_000, max: 200_000 }).map((n) => "x".repeat(n)),
);

/** JSON numbers at the edges. */
export const extremeNumber: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(0, -0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), Number.MAX_VALUE, Number.MIN_VALUE, 1e308),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.integer(),
);

export const nastyValue: fc.Arbitrary<unknown> = fc.oneof(
  { depthSize: "small" },
  nastyString,
  extremeNumber,
  fc.boolean(),
  fc.constant(null),
  fc.jsonValue({ maxDepth: 4 }),
);

/** Deeply nested JSON text (objects or arrays), 1 to 6,000 levels. */
export const deepJson: fc.Arbitrary<string> = fc
  .tuple(fc.integer({ min: 1, max: 6_000 }), fc.boolean())
  .map(([n, arrays]) => (arrays ? "[".repeat(n) + "]".repeat(n) : `${'{"a":'.repeat(n)}1${"}".repeat(n)}`));

/** Bodies: malformed text, wrong types, or an object built from `fields` with some values made nasty. */
export function bodyOf(fields: Record<string, fc.Arbitrary<unknown>>): fc.Arbitrary<string | undefined> {
  const object = fc.record(
    Object.fromEntries(
      Object.entries(fields).map(([k, arb]) => [
        k,
        fc.oneof({ weight: 3, arbitrary: arb }, { weight: 1, arbitrary: nastyValue }),
      ]),
    ),
    { requiredKeys: [] },
  );
  const withExtra = fc
    .tuple(object, fc.dictionary(nastyString, nastyValue, { maxKeys: 3 }))
    .map(([o, extra]) => ({ ...extra, ...o }));
  return fc.oneof(
    { weight: 6, arbitrary: withExtra.map((o) => jsonStringifyLoose(o)) },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        undefined,
        "",
        "{",
        "[]",
        "null",
        "1",
        '"x"',
        '{"a":}',
        "\u0000",
        '{"query":"\\ud800"}',
        '{"query":"a\\u0000"}',
      ),
    },
    { weight: 1, arbitrary: deepJson.map((d) => `{"query":"q","context":{"x":${d}}}`) },
    { weight: 1, arbitrary: nastyValue.map((v) => jsonStringifyLoose(v)) },
  );
}

/** JSON.stringify that keeps lone surrogates as escapes (the well-formed JSON.stringify of ES2019). */
function jsonStringifyLoose(v: unknown): string {
  return JSON.stringify(v) ?? "null";
}

/** A path segment: a real id, a UUID nobody owns, or garbage (percent-encoded; lone surrogates as raw UTF-8 bytes below). */
export function idSegment(real: string[]): fc.Arbitrary<string> {
  return fc.oneof(
    { weight: 3, arbitrary: fc.constantFrom(...real) },
    { weight: 2, arbitrary: fc.uuid() },
    { weight: 2, arbitrary: nastyString.map((s) => encodeURIComponent(s.slice(0, 5_000).toWellFormed())) },
    { weight: 1, arbitrary: fc.constantFrom("%00", "%FF", "%", "%2e%2e", "..", "%C0%AF", "a%00b", "%ED%A0%80") },
  );
}

/** A query string: known keys with nasty values, repeated parameters, unknown keys. */
export function queryOf(keys: string[]): fc.Arbitrary<string> {
  const value = fc.oneof(
    nastyString,
    extremeNumber.map(String),
    fc.constantFrom("", "0", "-1", "100000000000000000000", "1.5", "QUEUED", "CANCELED"),
  );
  return fc
    .array(
      fc.tuple(
        fc.oneof(
          { weight: 4, arbitrary: fc.constantFrom(...keys) },
          { weight: 1, arbitrary: fc.string({ maxLength: 8 }) },
        ),
        value,
      ),
      { maxLength: 5 },
    )
    .map((pairs) =>
      pairs.length === 0
        ? ""
        : `?${pairs.map(([k, v]) => `${encodeURIComponent(k.toWellFormed())}=${encodeURIComponent(v.slice(0, 2_000).toWellFormed())}`).join("&")}`,
    );
}

/** Headers: a valid key most of the time, otherwise none or garbage; odd content types and extras. */
export function headersOf(key: string): fc.Arbitrary<Record<string, string>> {
  return fc
    .record({
      auth: fc.oneof(
        { weight: 8, arbitrary: fc.constant({ "X-API-Key": key }) },
        { weight: 1, arbitrary: fc.constant({}) },
        {
          weight: 1,
          arbitrary: fc.constantFrom(
            { "X-API-Key": `sk_${"0".repeat(64)}` },
            { Authorization: "Bearer x.y.z" },
            { Authorization: "Basic Zm9vOmJhcg==" },
            { "X-API-Key": "sk_" },
          ),
        },
      ),
      contentType: fc.constantFrom(
        "application/json",
        "application/json",
        "application/json; charset=utf-8",
        "text/plain",
        "application/x-www-form-urlencoded",
        "application/json; charset=latin1",
        "",
      ),
      extra: fc.constantFrom(
        {},
        {},
        { "Idempotency-Key": "fuzz-key" },
        { traceparent: "00-zz-zz-01" },
        { traceparent: "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01" },
        { "Last-Event-ID": "99999999999999999999-1" },
        { "Accept-Encoding": "gzip, br" },
        { Origin: "https://evil.example" },
        { "Content-Encoding": "gzip" },
        { Expect: "100-continue" },
      ),
    })
    .map(
      ({ auth, contentType, extra }): Record<string, string> => ({
        ...(auth as Record<string, string>),
        ...(contentType ? { "Content-Type": contentType } : {}),
        ...(extra as Record<string, string>),
      }),
    );
}
