// Fuzz suite, part 3 of 3 (issue 11): both stream transports through the public port with
// authentication on. 1,500 generated SSE requests (the answer is judged by its status and
// headers, then cut) and 1,500 generated WebSocket client messages (each must be answered with
// pong or events, ignored, or refused by a 4400/4404 close naming why — never an error message, a
// 1011 or a 45xx close).
import fc from "fast-check";
import { afterAll, beforeAll, expect, it } from "vitest";
import { e2eConfig, type E2eEnvironment } from "@tog/tests-e2e";
import { createTask, WsClient, wsUrl, type Json } from "../stream/support.ts";
import {
  expectHealthy,
  extremeNumber,
  fuzz,
  headersOf,
  idSegment,
  nastyString,
  nastyValue,
  queryOf,
  startFuzzEnvironment,
  type FuzzRequest,
} from "./fuzz-support.ts";

let env: E2eEnvironment;
let key: string;
const tasks: string[] = [];

beforeAll(async () => {
  // Thousands of stream opens of one key: the stream-open limit must not be what answers.
  ({ env, key } = await startFuzzEnvironment(["gateway", "orchestrator", "stream"], {
    services: { stream: { RATE_LIMIT_STREAM_RPM: "1000000", RATE_LIMIT_STREAM_BURST: "100000" } },
  }));
  for (let i = 0; i < 2; i++) tasks.push(await createTask(env.baseUrl, key));
}, 120_000);
afterAll(async () => {
  await env?.close();
});

it("1,500 generated SSE requests: no 5xx, JSON errors with contract statuses", async () => {
  const id = idSegment(tasks);
  const sse: fc.Arbitrary<FuzzRequest> = fc
    .tuple(
      fc.oneof(
        fc
          .tuple(id, queryOf(["types", "last_event_id", "workflow_id", "api_key"]))
          .map(([w, q]) => `/stream/sse?workflow_id=${w}${q.replace("?", "&")}`),
        queryOf(["workflow_id", "types", "last_event_id"]).map((q) => `/stream/sse${q}`),
        fc.constantFrom("/stream/sse?workflow_id=a&workflow_id=b", "/stream/ws", "/stream/", "/stream/sse/x"),
      ),
      headersOf(key),
      fc.constantFrom("GET", "GET", "GET", "POST", "DELETE", "OPTIONS"),
    )
    .map(([path, headers, method]) => ({ method, path, headers }));
  expect(await fuzz(env.baseUrl, sse, 75, 20)).toBe(1_500);
}, 600_000);

it("1,500 generated WebSocket messages: each answered, ignored or refused by a 44xx close, never a server error", async () => {
  const task = fc.oneof(fc.constantFrom(...tasks), fc.uuid(), nastyString);
  const message = fc.oneof(
    fc
      .record(
        {
          type: fc.constantFrom("subscribe", "unsubscribe", "ping", "SUBSCRIBE", "nope"),
          workflow_id: task,
          types: fc.oneof(fc.array(nastyString, { maxLength: 3 }), nastyString),
          last_event_id: fc.oneof(nastyString, extremeNumber),
        },
        { requiredKeys: ["type"] },
      )
      .map((m) => JSON.stringify(m)),
    nastyValue.map((v) => JSON.stringify(v) ?? "null"),
    fc.constantFrom(
      "",
      "{",
      "[]",
      "null",
      '{"type":"ping"}',
      '{"type":"subscribe"}',
      "\u0000",
      `{"type":"subscribe","workflow_id":${"[".repeat(3_000)}${"]".repeat(3_000)}}`,
    ),
  );
  let sent = 0;
  let refused = 0;
  const open = async () => {
    const client = new WsClient(wsUrl(env.baseUrl), { "X-API-Key": key });
    await client.opened;
    return client;
  };
  /** Resolves undefined once a new pong came, or the close when the server closed first. */
  const pongOrClose = async (
    client: WsClient,
    pongs: number,
  ): Promise<{ code: number; reason: string } | undefined> => {
    const end = Date.now() + 15_000;
    for (;;) {
      if (client.messages.filter((x: Json) => x.type === "pong").length > pongs) return undefined;
      if (client.ws.readyState === client.ws.CLOSED) return client.closed;
      if (Date.now() > end)
        throw new Error(`WebSocket: neither pong nor close; got ${JSON.stringify(client.messages.slice(-3))}`);
      await new Promise((r) => setTimeout(r, 5));
    }
  };
  /** Server messages are events and pong only (contract 4.10). */
  const checkMessages = (client: WsClient) => {
    for (const m of client.messages as Json[])
      expect(m.type === "pong" || typeof m.seq === "number", JSON.stringify(m)).toBe(true);
  };
  await fc.assert(
    fc.asyncProperty(fc.array(message, { minLength: 50, maxLength: 50 }), async (batch) => {
      let client = await open();
      for (const m of batch) {
        // Each message, then a ping as a barrier: the pong says it was taken (answered or
        // ignored); a close says it was refused, and then the close code must say why.
        // (A subscribe is refused after its ownership check, so a 4404 may come after the pong
        // and be seen at the next message.)
        const pongs = client.messages.filter((x: Json) => x.type === "pong").length;
        client.send(m.length > 60_000 ? m.slice(0, 60_000) : m);
        client.send({ type: "ping" });
        sent++;
        const closed = await pongOrClose(client, pongs);
        if (closed === undefined) continue;
        checkMessages(client);
        expect([4400, 4404], `close ${closed.code} ${closed.reason} at ${m.slice(0, 200)}`).toContain(closed.code);
        expect(closed.reason.length, "a refusal says why").toBeGreaterThan(0);
        refused++;
        client = await open();
      }
      checkMessages(client);
      client.close();
      const closed = await client.closed;
      // Ours (1000/1005), or a refusal of the last subscribe that crossed it.
      expect([1000, 1005, 4400, 4404], `close ${closed.code} ${closed.reason}`).toContain(closed.code);
    }),
    {
      numRuns: 30,
      endOnFailure: true,
      ...(e2eConfig.E2E_FUZZ_SEED !== undefined ? { seed: e2eConfig.E2E_FUZZ_SEED } : {}),
      reporter: (out) => {
        if (!out.failed) return;
        const cause = out.errorInstance instanceof Error ? out.errorInstance.message : String(out.errorInstance);
        throw new Error(
          `fuzz failure; replay with E2E_FUZZ_SEED=${out.seed} (path ${out.counterexamplePath ?? "?"}): ${cause.slice(0, 2_000)}`,
        );
      },
    },
  );
  expect(sent).toBe(1_500);
  // The generator makes both kinds: the property above judged each.
  expect(refused).toBeGreaterThan(0);
  expect(refused).toBeLessThan(1_500);
  await expectHealthy(env);
}, 600_000);
