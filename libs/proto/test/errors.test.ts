import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { Server, ServerCredentials, status } from "@grpc/grpc-js";
import {
  AppError,
  ConflictError,
  ForbiddenError,
  NotFoundError,
  OverloadedError,
  PayloadTooLargeError,
  RateLimitedError,
  UnauthorizedError,
  UpstreamUnavailableError,
  ValidationError,
} from "@tog/core";
import { createOrchestratorClient, type OrchestratorClient } from "@tog/proto";
import { orchestratorServiceDefinition } from "../src/orchestrator-definition.ts";
import { captureLogs, startHarness, type Harness } from "./helpers.ts";

describe("errors thrown by the implementation", () => {
  let h: Harness;
  beforeAll(async () => {
    h = await startHarness();
  });
  afterAll(() => h.close());

  const cases: Array<[string, AppError]> = [
    [
      "ValidationError",
      new ValidationError("Invalid limit parameter: must be 1-200", { details: { parameter: "limit" } }),
    ],
    ["UnauthorizedError", new UnauthorizedError()],
    ["ForbiddenError", new ForbiddenError()],
    ["NotFoundError", new NotFoundError("Task not found")],
    [
      "ConflictError",
      new ConflictError("Approval already decided", { details: { status: "approved", note: "héllo ✓" } }),
    ],
    ["PayloadTooLargeError", new PayloadTooLargeError("Query too long")],
    ["RateLimitedError", new RateLimitedError(7, { details: { scope: "user" } })],
    ["UpstreamUnavailableError", new UpstreamUnavailableError("Run queue unreachable")],
    ["OverloadedError", new OverloadedError("Run queue full")],
  ];

  it.each(cases)("%s arrives as the same class, message and details", async (_name, thrown) => {
    h.fake.behaviour.getTask = async () => {
      throw thrown;
    };
    const err = await h.client.getTask("u", "t").catch((e: unknown) => e);
    expect(err).toBeInstanceOf(AppError);
    const got = err as AppError;
    expect(got.constructor).toBe(thrown.constructor);
    expect(got.code).toBe(thrown.code);
    expect(got.message).toBe(thrown.message);
    expect(got.details).toEqual(thrown.details);
    if (thrown instanceof RateLimitedError) expect((got as RateLimitedError).retryAfterSeconds).toBe(7);
  });

  it.each([
    ["a plain Error", new Error("connection to db at postgres://admin:hunter2@db failed")],
    ["an internal AppError", new AppError("INTERNAL", "pool exhausted: hunter2")],
    ["a thrown string", "hunter2"],
  ])("%s becomes an internal error whose text does not cross the wire, and is logged", async (_label, thrown) => {
    h.fake.behaviour.getTask = async () => {
      throw thrown;
    };
    const err = (await h.client.getTask("u", "t").catch((e: unknown) => e)) as AppError;
    expect(err.constructor).toBe(AppError);
    expect(err.code).toBe("INTERNAL");
    expect(err.message).toBe("Internal server error");
    expect(err.details).toBeUndefined();
    expect(JSON.stringify(err)).not.toContain("hunter2");
    expect((err.cause as { details?: string }).details).toBe("Internal error");
    const logged = h.serverLogs.lines.find(
      (l) => l.msg === "orchestrator call failed" && JSON.stringify(l).includes("hunter2"),
    );
    expect(logged).toMatchObject({ level: "error", method: "tog.orchestrator.v1.TaskOrchestrator/GetTask" });
  });

  it("a request the server cannot decode is a ValidationError, not a crash", async () => {
    h.fake.behaviour.submitTask = async () => ({
      taskId: "t",
      sessionId: "s",
      sessionRef: "s",
      status: "QUEUED",
      createdAt: "x",
    });
    // A context that is not a JSON object: only a broken client sends this.
    const err = await h.client
      .submitTask({ userId: "u", query: "q", context: [1, 2] as unknown as Record<string, unknown>, streaming: false })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationError);
    expect((err as Error).message).toBe("context_json: not a JSON object");
  });
});

describe("gRPC statuses without tog metadata (transport, proxies, other servers)", () => {
  let server: Server;
  let client: OrchestratorClient;
  let reply: { code: status; details: string };
  beforeAll(async () => {
    server = new Server();
    const service = orchestratorServiceDefinition();
    server.addService(service, {
      Ping: (_call: unknown, cb: (e: { code: status; details: string }) => void) => cb(reply),
    });
    const port = await new Promise<number>((resolve, reject) =>
      server.bindAsync("127.0.0.1:0", ServerCredentials.createInsecure(), (e, p) => (e ? reject(e) : resolve(p))),
    );
    client = createOrchestratorClient({
      address: `127.0.0.1:${port}`,
      deadlineMs: 2_000,
      logger: captureLogs("silent").logger,
    });
  });
  afterAll(() => {
    client.close();
    server.forceShutdown();
  });

  it.each([
    [status.UNAVAILABLE, UpstreamUnavailableError, "Orchestrator unavailable"],
    [status.CANCELLED, UpstreamUnavailableError, "Orchestrator unavailable"],
    [status.DEADLINE_EXCEEDED, OverloadedError, "Orchestrator did not answer in time"],
    [status.RESOURCE_EXHAUSTED, OverloadedError, "System overloaded"],
    [status.INVALID_ARGUMENT, ValidationError, "the message"],
    [status.NOT_FOUND, NotFoundError, "the message"],
    [status.PERMISSION_DENIED, ForbiddenError, "the message"],
    [status.FAILED_PRECONDITION, ConflictError, "the message"],
    [status.ALREADY_EXISTS, ConflictError, "the message"],
    [status.ABORTED, ConflictError, "the message"],
    [status.UNAUTHENTICATED, UnauthorizedError, "Unauthorized"],
    [status.UNKNOWN, AppError, "Internal server error"],
    [status.INTERNAL, AppError, "Internal server error"],
    [status.DATA_LOSS, AppError, "Internal server error"],
    [status.UNIMPLEMENTED, AppError, "Internal server error"],
  ] as const)("status %s → %o", async (code, cls, message) => {
    reply = { code, details: "the message" };
    const err = (await client.ping().catch((e: unknown) => e)) as AppError;
    expect(err.constructor).toBe(cls);
    expect(err.message).toBe(message);
    if (cls === AppError) expect(err.code).toBe("INTERNAL");
  });
});
