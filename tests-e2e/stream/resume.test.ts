// Resuming: clients that disconnect at random points (property-based), and clients that
// outlive the stream service being restarted (graceful and SIGKILL) mid-stream. In every case
// the union of what a client received is the whole gap-free sequence, and no single connection
// skipped an event.
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Bus } from "@tog/bus";
import type { RunningService } from "@tog/devstack";
import { startE2eEnvironment, type E2eEnvironment } from "@tog/tests-e2e";
import {
  createTask,
  EventPublisher,
  followSse,
  followWs,
  openEnvBus,
  range,
  SseClient,
  sseUrl,
  wsUrl,
  type Connection,
  type Json,
} from "./support.ts";

let env: E2eEnvironment;
let bus: Bus;
let key: string;
/** The running instance at each of the two stream ports (restarts replace them). */
const instances: RunningService[] = [];

beforeAll(async () => {
  env = await startE2eEnvironment({
    allowRouterErrors: true, // the stream instances are stopped and killed
    env: { GATEWAY_SKIP_AUTH: "0", RATE_LIMIT_RPM: "100000", RATE_LIMIT_BURST: "10000" },
    only: ["gateway", "orchestrator", "stream"],
    replicas: { stream: 2 },
    services: { stream: { STREAM_RETRY_MS: "100", SHUTDOWN_TIMEOUT_MS: "3000" } },
  });
  bus = await openEnvBus(env);
  key = (await env.createApiKey({ user: "carol@example.com", createUser: true })).key;
  instances.push(env.service("stream", 0), env.service("stream", 1));
}, 120_000);
afterAll(async () => {
  await bus?.close();
  await env?.close();
});

const headers = () => ({ "X-API-Key": key });

/** Every connection continued exactly after its resume point without a gap; together they cover 1..n. */
function expectGapFree(connections: Connection[], events: Json[], n: number): void {
  for (const c of connections)
    expect(c.seqs, `connection resuming after ${c.resumeAfter}`).toEqual(
      range(c.resumeAfter + 1, c.resumeAfter + c.seqs.length),
    );
  expect([...new Set(events.map((e) => e.seq as number))].sort((a, b) => a - b)).toEqual(range(1, n));
}

describe("random disconnects (property)", () => {
  const step = fc.record({
    /** Disconnect after this many more events (0: right after the stream opened, mid-replay included). */
    afterEvents: fc.integer({ min: 0, max: 25 }),
    /** ...or after this long, whichever comes first. */
    afterMs: fc.integer({ min: 0, max: 120 }),
    /** How the resume point is sent. */
    idForm: fc.constantFrom("stream-id-header", "number-header", "stream-id-query", "number-query"),
    /** Which instance answers (directly, or round-robin through the router). */
    via: fc.constantFrom("router", "instance-0", "instance-1"),
  });

  it("the union of what a client received over its connections is the full gap-free sequence", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(step, { minLength: 1, maxLength: 8 }),
        fc.integer({ min: 0, max: 60 }),
        async (plan, head) => {
          const wf = new EventPublisher(bus, await createTask(env.baseUrl, key));
          const total = 90;
          await wf.emit(head);
          const producing = wf.emit(total - head, { last: true, delayMs: 4 });
          const connections: Connection[] = [];
          const events: Json[] = [];
          let lastId: string | undefined;
          let finished = false;
          for (const s of [...plan, null]) {
            const base =
              s === null || s.via === "router"
                ? env.baseUrl
                : `${instances[s.via === "instance-0" ? 0 : 1]!.url}/api/v1`;
            const lastSeq = lastId ? lastId.split("-")[1]! : undefined;
            const form = s?.idForm ?? "stream-id-header";
            const value = lastId === undefined ? undefined : form.startsWith("number") ? lastSeq! : lastId;
            const query: Record<string, string> = { workflow_id: wf.taskId };
            const extra: Record<string, string> = {};
            if (value !== undefined && form.endsWith("query")) query.last_event_id = value;
            if (value !== undefined && form.endsWith("header")) extra["Last-Event-ID"] = value;
            const client = new SseClient(sseUrl(base, query), { ...headers(), ...extra });
            if (s !== null) {
              const want = s.afterEvents;
              await Promise.race([
                client.waitFor((c) => c.seqs.length >= want, 10_000).catch(() => undefined),
                new Promise((r) => setTimeout(r, s.afterMs)),
              ]);
              client.close();
            }
            const how = await client.done;
            // Every instance is up: any answer but the stream or its end (204) is a failure, not a short stream.
            if (client.status !== 0) expect([200, 204], client.body).toContain(client.status);
            if (client.status === 204) {
              finished = true;
              break;
            }
            const seen = client.events;
            connections.push({ resumeAfter: lastId ? Number(lastSeq) : 0, seqs: seen.map((e) => e.seq as number) });
            events.push(...seen);
            lastId = client.lastId ?? lastId;
            if (s === null) {
              expect(how).toBe("ended");
              finished = true;
            }
          }
          await producing;
          expect(finished).toBe(true);
          expectGapFree(connections, events, total);
        },
      ),
      { numRuns: 12, endOnFailure: true },
    );
  }, 180_000);
});

describe("the stream service restarted mid-stream", () => {
  for (const how of ["graceful", "killed"] as const) {
    it(`SSE and WebSocket clients resume after the instance is ${how === "graceful" ? "stopped (SIGTERM)" : "killed (SIGKILL)"} and restarted`, async () => {
      const wf = new EventPublisher(bus, await createTask(env.baseUrl, key));
      const total = 600;
      await wf.emit(20);
      // Both instances stop and come back on their ports, so every client loses its connection.
      const sse = [0, 1, 0, 1].map((i) =>
        followSse({
          url: () => sseUrl(`${instances[i]!.url}/api/v1`, { workflow_id: wf.taskId }),
          headers: headers(),
          timeoutMs: 60_000,
        }),
      );
      const ws = [0, 1].map((i) =>
        followWs({
          url: () => wsUrl(`${instances[i]!.url}/api/v1`),
          headers: headers(),
          taskId: wf.taskId,
          timeoutMs: 60_000,
        }),
      );
      const producing = wf.emit(total - 20, { last: true, delayMs: 5 });
      await new Promise((r) => setTimeout(r, 400));
      await Promise.all(
        [0, 1].map(async (index) => {
          const instance = instances[index]!;
          const port = instance.port!;
          if (how === "graceful") await instance.stop(5_000);
          else await instance.kill();
          instances[index] = await env.stack.startInstance("stream", { port, env: { STREAM_RETRY_MS: "100" } });
        }),
      );
      await producing;
      for (const result of await Promise.all([...sse, ...ws])) {
        expect(result.connections.length).toBeGreaterThanOrEqual(2);
        expectGapFree(result.connections, result.events, total);
      }
    }, 90_000);
  }
});
