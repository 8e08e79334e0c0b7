import { createServer } from "node:net";
import { Writable } from "node:stream";
import { createLogger, type Logger } from "@tog/core";
import {
  createOrchestratorClient,
  startOrchestratorServer,
  type OrchestratorClient,
  type OrchestratorServer,
  type TaskOrchestrator,
} from "@tog/proto";

export interface LogCapture {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
}

export function captureLogs(level = "debug"): LogCapture {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger({ service: "proto-test", level, destination }), lines };
}

/**
 * A TaskOrchestrator whose methods the test sets; what the transport delivered is kept in
 * `calls`. (The transport is under test here, not the orchestrator.)
 */
export function fakeOrchestrator() {
  const calls: Array<{ method: keyof TaskOrchestrator; args: unknown[] }> = [];
  const behaviour: Partial<TaskOrchestrator> = {};
  const impl = new Proxy({} as TaskOrchestrator, {
    get(_target, prop: keyof TaskOrchestrator) {
      return async (...args: unknown[]) => {
        calls.push({ method: prop, args });
        const fn = behaviour[prop] as ((...a: unknown[]) => Promise<unknown>) | undefined;
        if (!fn) throw new Error(`fake: ${String(prop)} not set`);
        return fn(...args);
      };
    },
  });
  return { impl, calls, behaviour };
}

export interface Harness {
  server: OrchestratorServer;
  client: OrchestratorClient;
  fake: ReturnType<typeof fakeOrchestrator>;
  serverLogs: LogCapture;
  /** Methods of the calls the server received, in order; `shed`: methods refused by maxInFlight. */
  rpcs: string[];
  shed: string[];
  close(): Promise<void>;
}

export async function startHarness(
  options: { deadlineMs?: number; submitBatchesInFlight?: number; submitStallMs?: number; maxInFlight?: number } = {},
): Promise<Harness> {
  const fake = fakeOrchestrator();
  const serverLogs = captureLogs();
  const rpcs: string[] = [];
  const shed: string[] = [];
  const server = await startOrchestratorServer({
    impl: fake.impl,
    host: "127.0.0.1",
    port: 0,
    logger: serverLogs.logger,
    maxInFlight: options.maxInFlight,
    onCall: (method) => rpcs.push(method),
    onShed: (method) => shed.push(method),
  });
  const client = createOrchestratorClient({
    address: `127.0.0.1:${server.port}`,
    deadlineMs: options.deadlineMs ?? 5_000,
    submitBatchesInFlight: options.submitBatchesInFlight,
    // Long by default, so which submits share a call does not depend on how busy the machine is
    // (a CI run saw the first call take over 25 ms to arrive); the stall test sets its own.
    submitStallMs: options.submitStallMs ?? 10_000,
    logger: captureLogs("silent").logger,
  });
  return {
    server,
    client,
    fake,
    serverLogs,
    rpcs,
    shed,
    async close() {
      client.close();
      server.forceShutdown();
    },
  };
}

/** A TCP port nobody listens on (bound, then released). */
export async function freePort(): Promise<number> {
  const srv = createServer();
  await new Promise<void>((resolve) => srv.listen(0, "127.0.0.1", resolve));
  const address = srv.address();
  await new Promise<void>((resolve) => srv.close(() => resolve()));
  if (typeof address !== "object" || address === null) throw new Error("no port");
  return address.port;
}

export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));
