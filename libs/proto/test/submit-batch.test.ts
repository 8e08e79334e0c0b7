import { afterEach, beforeAll, describe, expect, it } from "vitest";
import {
  type AppError,
  ConflictError,
  currentTraceIds,
  extractTraceContext,
  initTelemetry,
  RateLimitedError,
  ValidationError,
  withSpan,
} from "@tog/core";
import { Client, Metadata, Server, ServerCredentials, credentials, type ServerWritableStream } from "@grpc/grpc-js";
import { createOrchestratorClient, type SubmitTaskCommand, type SubmitTaskResult } from "@tog/proto";
import type { SubmitTaskOutcome__Output } from "../src/generated/tog/orchestrator/v1/SubmitTaskOutcome.ts";
import { orchestratorServiceDefinition } from "../src/orchestrator-definition.ts";
import { encodeSubmitTaskRequest } from "../src/wire-codec.ts";
import { captureLogs, startHarness, type Harness } from "./helpers.ts";

// Submits made while the client's submit calls are in flight go out together in one
// SubmitTasks call (docs/performance.md "Submit"); each must come back exactly as if it had
// been a call of its own: its result, its error, its trace.

const command = (query: string): SubmitTaskCommand => ({ userId: "u", query, context: {}, streaming: false });
const resultOf = (query: string): SubmitTaskResult => ({
  taskId: `task-${query}`,
  sessionId: "s",
  sessionRef: "s",
  status: "QUEUED",
  createdAt: "2026-01-01T00:00:00.000Z",
});

/** The fake's submitTask: the first call waits for `release`; every call answers by its query. */
function gatedSubmit(h: Harness, answer: (query: string) => Promise<SubmitTaskResult> = async (q) => resultOf(q)) {
  let release!: () => void;
  const gate = new Promise<void>((r) => {
    release = r;
  });
  let first = true;
  let arrived!: () => void;
  const firstArrived = new Promise<void>((r) => {
    arrived = r;
  });
  h.fake.behaviour.submitTask = async (c) => {
    if (first) {
      first = false;
      arrived();
      await gate;
    }
    return answer(c.query);
  };
  return { release, firstArrived };
}

const GOOD_WIRE = { task_id: "t", session_id: "s", session_ref: "s", status: "TASK_STATUS_QUEUED", created_at: "x" };

/**
 * Another orchestrator build, by hand: `service` and its handlers on a grpc-js Server, and a
 * batching client of it. Its first SubmitTask is answered only after `releaseFirst`, so the
 * submits made meanwhile queue up for one batch.
 */
async function otherServer(
  service: Parameters<Server["addService"]>[0],
  handlers: (firstHeld: Promise<void>) => Parameters<Server["addService"]>[1],
) {
  const server = new Server();
  let releaseFirst!: () => void;
  const firstHeld = new Promise<void>((r) => {
    releaseFirst = r;
  });
  server.addService(service, handlers(firstHeld));
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
  );
  const client = createOrchestratorClient({
    address: `127.0.0.1:${port}`,
    logger: captureLogs("silent").logger,
    submitBatchesInFlight: 1,
  });
  return {
    client,
    releaseFirst,
    close() {
      client.close();
      server.forceShutdown();
    },
  };
}

let h: Harness | undefined;
beforeAll(() => {
  // Spans are made (the trace id travels) but not exported, as in a service without OTLP.
  initTelemetry({ serviceName: "proto-test" });
});
afterEach(async () => {
  await h?.close();
  h = undefined;
});

describe("submits batched by the client", () => {
  it("submits made while a call is in flight go out together in one SubmitTasks call", async () => {
    h = await startHarness({ submitBatchesInFlight: 1 });
    const { release, firstArrived } = gatedSubmit(h);
    const first = h.client.submitTask(command("q0"));
    await firstArrived;
    const rest = ["q1", "q2", "q3", "q4", "q5"].map((q) => h!.client.submitTask(command(q)));
    release();
    expect(await first).toEqual(resultOf("q0"));
    expect(await Promise.all(rest)).toEqual(["q1", "q2", "q3", "q4", "q5"].map(resultOf));
    expect(h.rpcs).toEqual(["SubmitTask", "SubmitTasks"]);
    expect(h.fake.calls.map((c) => c.args)).toEqual(["q0", "q1", "q2", "q3", "q4", "q5"].map((q) => [command(q)]));
  });

  it("without batching every submit is a call of its own", async () => {
    h = await startHarness();
    const { release, firstArrived } = gatedSubmit(h);
    const first = h.client.submitTask(command("q0"));
    await firstArrived;
    const rest = ["q1", "q2"].map((q) => h!.client.submitTask(command(q)));
    release();
    await Promise.all([first, ...rest]);
    expect(h.rpcs).toEqual(["SubmitTask", "SubmitTask", "SubmitTask"]);
  });

  it("each item fails with the error a call of its own gets", async () => {
    const thrown: Record<string, unknown> = {
      invalid: new ValidationError("Invalid mode", { details: { parameter: "mode" } }),
      conflict: new ConflictError("Idempotency-Key reused", { details: { note: "héllo ✓" } }),
      limited: new RateLimitedError(7, { details: { scope: "user" } }),
      secret: new Error("connection to postgres://admin:hunter2@db failed"),
    };
    const answer = async (q: string) => {
      if (q in thrown) throw thrown[q];
      return resultOf(q);
    };
    const outcomes = async (batched: boolean) => {
      h = await startHarness({ submitBatchesInFlight: batched ? 1 : 0 });
      const { release, firstArrived } = gatedSubmit(h, answer);
      const first = h.client.submitTask(command("ok-first"));
      await firstArrived;
      const rest = ["invalid", "ok", "conflict", "limited", "secret"].map((q) =>
        h!.client.submitTask(command(q)).catch((e: unknown) => e),
      );
      release();
      await first;
      const got = await Promise.all(rest);
      const rpcs = [...h.rpcs];
      await h.close();
      h = undefined;
      return { got, rpcs };
    };
    const single = await outcomes(false);
    const batched = await outcomes(true);
    expect(batched.rpcs).toEqual(["SubmitTask", "SubmitTasks"]);
    expect(batched.got[1]).toEqual(resultOf("ok"));
    for (const [i, err] of batched.got.entries()) {
      if (i === 1) continue;
      const expected = single.got[i] as AppError;
      expect(err).toBeInstanceOf(expected.constructor);
      const got = err as AppError;
      expect([got.code, got.message, got.details]).toEqual([expected.code, expected.message, expected.details]);
    }
    expect((batched.got[3] as RateLimitedError).retryAfterSeconds).toBe(7);
    expect((batched.got[4] as AppError).code).toBe("INTERNAL");
    expect(JSON.stringify(batched.got[4])).not.toContain("hunter2");
  });

  it("each item runs in its own caller's trace", async () => {
    h = await startHarness({ submitBatchesInFlight: 1 });
    const traces = new Map<string, string | undefined>();
    const { release, firstArrived } = gatedSubmit(h, async (q) => {
      traces.set(q, currentTraceIds()?.trace_id);
      return resultOf(q);
    });
    const inTrace = (traceId: string, q: string) =>
      withSpan("http", () => h!.client.submitTask(command(q)), {
        parent: extractTraceContext({ traceparent: `00-${traceId}-00f067aa0ba902b7-01` }),
      });
    const ids = ["1", "2", "3", "4"].map((d) => d.repeat(32));
    const first = inTrace(ids[0]!, "t0");
    await firstArrived;
    const rest = [inTrace(ids[1]!, "t1"), inTrace(ids[2]!, "t2"), inTrace(ids[3]!, "t3")];
    release();
    await Promise.all([first, ...rest]);
    expect(h.rpcs).toEqual(["SubmitTask", "SubmitTasks"]);
    expect(Object.fromEntries(traces)).toEqual({ t0: ids[0], t1: ids[1], t2: ids[2], t3: ids[3] });
  });

  it("the server's in-flight bound refuses the items beyond it one by one", async () => {
    h = await startHarness({ maxInFlight: 2 });
    const { release, firstArrived } = gatedSubmit(h);
    const first = h.client.submitTask(command("q0"));
    await firstArrived;
    // One slot is taken by q0: of the next three, one runs and two are refused.
    const raw = new Client(`127.0.0.1:${h.server.port}`, credentials.createInsecure());
    const method = orchestratorServiceDefinition().SubmitTasks;
    const items = ["q1", "q2", "q3"].map((q) => ({ request: encodeSubmitTaskRequest(command(q)) }));
    try {
      const outcomes = await new Promise<SubmitTaskOutcome__Output[]>((resolve, reject) => {
        const got: SubmitTaskOutcome__Output[] = [];
        const stream = raw.makeServerStreamRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          { items },
          new Metadata(),
        );
        stream.on("data", (o: SubmitTaskOutcome__Output) => got.push(o));
        stream.on("error", reject);
        stream.on("end", () => resolve(got));
      });
      const byIndex = outcomes.sort((a, b) => a.index - b.index);
      expect(byIndex.map((o) => o.index)).toEqual([0, 1, 2]);
      expect(byIndex[0]?.task?.task_id).toBe("task-q1");
      for (const outcome of byIndex.slice(1))
        expect(outcome.error).toEqual({ code: "OVERLOADED", message: "System overloaded", details_json: "" });
    } finally {
      raw.close();
    }
    release();
    await first;
    expect(h.shed).toEqual(["SubmitTask", "SubmitTask"]);
    expect(h.fake.calls.map((c) => (c.args[0] as SubmitTaskCommand).query)).toEqual(["q0", "q1"]);
  });

  it("a call that hangs holds the submits behind it back only briefly, not until its deadline", async () => {
    h = await startHarness({ submitBatchesInFlight: 1, submitStallMs: 300 });
    const { release, firstArrived } = gatedSubmit(h);
    const first = h.client.submitTask(command("q0"));
    await firstArrived;
    const rest = ["q1", "q2"].map((q) => h!.client.submitTask(command(q)));
    // q0 is still held: q1 and q2 went out past the stall time (300 ms here), in one call.
    expect(await Promise.all(rest)).toEqual(["q1", "q2"].map(resultOf));
    expect(h.rpcs).toEqual(["SubmitTask", "SubmitTasks"]);
    release();
    expect(await first).toEqual(resultOf("q0"));
  });

  it("an item that is slow holds no other item of its call back", async () => {
    h = await startHarness({ submitBatchesInFlight: 1 });
    let releaseSlow!: () => void;
    const slow = new Promise<void>((r) => {
      releaseSlow = r;
    });
    const { release, firstArrived } = gatedSubmit(h, async (q) => {
      if (q === "slow") await slow;
      return resultOf(q);
    });
    const first = h.client.submitTask(command("q0"));
    await firstArrived;
    const slowOne = h.client.submitTask(command("slow"));
    const quick = ["q1", "q2"].map((q) => h!.client.submitTask(command(q)));
    release();
    expect(await first).toEqual(resultOf("q0"));
    expect(await Promise.all(quick)).toEqual(["q1", "q2"].map(resultOf));
    expect(h.rpcs).toEqual(["SubmitTask", "SubmitTasks"]);
    releaseSlow();
    expect(await slowOne).toEqual(resultOf("slow"));
  });

  it("an outcome the client cannot read, or none, fails its item and nothing else", async () => {
    // One outcome with no status, one for an index that does not exist, one good, none for the last item.
    const other = await otherServer(orchestratorServiceDefinition(), (firstHeld) => ({
      SubmitTask: (_call: unknown, cb: (e: null, r: unknown) => void) => void firstHeld.then(() => cb(null, GOOD_WIRE)),
      SubmitTasks: (call: ServerWritableStream<unknown, unknown>) => {
        call.write({ index: 0, task: { ...GOOD_WIRE, status: "TASK_STATUS_UNSPECIFIED" } });
        call.write({ index: 7, task: GOOD_WIRE });
        call.write({ index: 1, task: GOOD_WIRE });
        call.end();
      },
    }));
    try {
      const first = other.client.submitTask(command("q0"));
      await new Promise((r) => setTimeout(r, 5));
      const rest = ["q1", "q2", "q3"].map((q) => other.client.submitTask(command(q)).catch((e: unknown) => e));
      other.releaseFirst();
      await first;
      const [unreadable, fine, missing] = await Promise.all(rest);
      expect((unreadable as AppError).code).toBe("INTERNAL");
      expect(fine).toMatchObject({ taskId: "t", status: "QUEUED" });
      expect(String(missing)).toContain("no outcome for item 2 of 3");
    } finally {
      other.close();
    }
  });

  it("an orchestrator without SubmitTasks (an older release) gets the submits one call each", async () => {
    let calls = 0;
    const { SubmitTask } = orchestratorServiceDefinition();
    const other = await otherServer({ SubmitTask }, (firstHeld) => ({
      SubmitTask: (_call: unknown, cb: (e: null, r: unknown) => void) => {
        calls++;
        const answer = () => cb(null, { ...GOOD_WIRE, task_id: `t${calls}` });
        if (calls === 1) void firstHeld.then(answer);
        else answer();
      },
    }));
    try {
      const first = other.client.submitTask(command("q0"));
      await new Promise((r) => setTimeout(r, 5));
      const rest = ["q1", "q2", "q3"].map((q) => other.client.submitTask(command(q)));
      other.releaseFirst();
      await first;
      const got = await Promise.all(rest);
      expect(got.map((r) => r.status)).toEqual(["QUEUED", "QUEUED", "QUEUED"]);
      expect(calls).toBe(4);
    } finally {
      other.close();
    }
  });
});
