import {
  Server,
  ServerCredentials,
  status,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
} from "@grpc/grpc-js";
import {
  SpanKind,
  SpanStatusCode,
  autoInstrumented,
  context,
  extractTraceContext,
  trace,
  withSpan,
  type Logger,
  OverloadedError,
  type Span,
} from "@tog/core";
import { errorToStatus, isInternal } from "./grpc-errors.ts";
import type { TaskOrchestratorHandlers } from "./generated/tog/orchestrator/v1/TaskOrchestrator.ts";
import { ORCHESTRATOR_SERVICE_NAME, orchestratorServiceDefinition } from "./orchestrator-definition.ts";
import type { TaskOrchestrator } from "./task-orchestrator.ts";
import * as wire from "./wire-codec.ts";

export interface OrchestratorServerOptions {
  impl: TaskOrchestrator;
  /** Interface to listen on (0.0.0.0 in containers). */
  host: string;
  /** 0 = any free port (tests); the bound port is returned. */
  port: number;
  logger: Logger;
  /** TLS (tls.ts serverCredentialsOf); default plaintext. */
  credentials?: ServerCredentials | undefined;
  /**
   * Calls worked on at once (Ping aside); beyond it a call is refused RESOURCE_EXHAUSTED at once
   * (the gateway answers 503 + Retry-After) instead of queueing for the database pool past its
   * deadline (docs/reliability.md "Overload"). Unset or 0: no bound.
   */
  maxInFlight?: number | undefined;
  /** Called per call refused by `maxInFlight` (a metrics counter). */
  onShed?: ((method: string) => void) | undefined;
}

export interface OrchestratorServer {
  port: number;
  /** Stops accepting calls and resolves once the calls in flight have finished. */
  tryShutdown(): Promise<void>;
  /** Cancels the calls in flight and closes every connection at once. */
  forceShutdown(): void;
  /** tryShutdown, then forceShutdown for whatever is still running after `graceMs`. */
  shutdown(graceMs: number): Promise<void>;
}

/** The trace context of the caller, from the call's `traceparent`/`tracestate` metadata. */
function callerContext(metadata: Metadata) {
  const carrier: Record<string, string> = {};
  for (const key of ["traceparent", "tracestate"]) {
    const value = metadata.get(key)[0];
    if (typeof value === "string") carrier[key] = value;
  }
  // Extract on top of a context without a span, so a call without (valid) trace headers
  // starts its own trace instead of joining whatever the connection was opened in.
  return context.with(trace.deleteSpan(context.active()), () => extractTraceContext(carrier));
}

/** Serves a TaskOrchestrator over gRPC (insecure credentials: the network is the cluster's). */
export function startOrchestratorServer(options: OrchestratorServerOptions): Promise<OrchestratorServer> {
  const { impl, logger } = options;
  const service = orchestratorServiceDefinition();
  const maxInFlight = options.maxInFlight ?? 0;
  let inFlight = 0;

  function unary<Req, Res>(method: string, handle: (request: Req) => Promise<Res>) {
    const name = `${ORCHESTRATOR_SERVICE_NAME}/${method}`;
    // `span`: the hand-made server span; undefined when the gRPC instrumentation made one (it
    // sets the status from the code the callback gets).
    const answer = async (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>, span: Span | undefined) => {
      try {
        const response = await handle(call.request);
        span?.setAttribute("rpc.grpc.status_code", status.OK);
        if (!call.cancelled) callback(null, response);
      } catch (err) {
        const reply = errorToStatus(err);
        span?.setAttribute("rpc.grpc.status_code", reply.code);
        if (isInternal(err)) {
          span?.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
          logger.error({ err, method: name }, "orchestrator call failed");
        } else logger.debug({ err, method: name }, "orchestrator call rejected");
        if (!call.cancelled) callback(reply);
      }
      if (call.cancelled) logger.debug({ method: name }, "call cancelled or past its deadline before the answer");
    };
    const failed = (err: unknown) => logger.error({ err, method: name }, "answering a call failed");
    const bounded = method !== "Ping";
    const serve = (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): Promise<void> =>
      // With the preload's instrumentations the gRPC server span already runs (docs/architecture.md, "Tracing").
      autoInstrumented()
        ? answer(call, callback, undefined)
        : withSpan(name, (span) => answer(call, callback, span), {
            parent: callerContext(call.metadata),
            kind: SpanKind.SERVER,
            attributes: { "rpc.system": "grpc", "rpc.service": ORCHESTRATOR_SERVICE_NAME, "rpc.method": method },
          });
    return (call: ServerUnaryCall<Req, Res>, callback: sendUnaryData<Res>): void => {
      // Past its deadline already (it waited in a starved event loop): nobody waits for the answer.
      if (call.cancelled) return;
      if (!bounded) {
        serve(call, callback).catch(failed);
        return;
      }
      if (maxInFlight > 0 && inFlight >= maxInFlight) {
        options.onShed?.(method);
        callback(errorToStatus(new OverloadedError("System overloaded")));
        return;
      }
      // Held until the handler is done, even when the caller gave up first: the work is still running.
      inFlight++;
      serve(call, callback)
        .catch(failed)
        .finally(() => {
          inFlight--;
        });
    };
  }

  const handlers: TaskOrchestratorHandlers = {
    SubmitTask: unary("SubmitTask", async (r) =>
      wire.encodeSubmitTaskResponse(await impl.submitTask(wire.decodeSubmitTaskRequest(r))),
    ),
    GetTask: unary("GetTask", async (r) => {
      const { userId, taskId } = wire.decodeGetTaskRequest(r);
      return { task: wire.encodeTaskDetail(await impl.getTask(userId, taskId)) };
    }),
    ListTasks: unary("ListTasks", async (r) =>
      wire.encodeListTasksResponse(await impl.listTasks(wire.decodeListTasksRequest(r))),
    ),
    CancelTask: unary("CancelTask", async (r) => {
      const { userId, taskId, reason } = wire.decodeCancelTaskRequest(r);
      return wire.encodeCancelTaskResponse(await impl.cancelTask(userId, taskId, reason));
    }),
    DecideApproval: unary("DecideApproval", async (r) =>
      wire.encodeDecideApprovalResponse(await impl.decideApproval(wire.decodeDecideApprovalRequest(r))),
    ),
    GetTaskEvents: unary("GetTaskEvents", async (r) =>
      wire.encodeGetTaskEventsResponse(await impl.getTaskEvents(wire.decodeGetTaskEventsRequest(r))),
    ),
    GetTimeline: unary("GetTimeline", async (r) =>
      wire.encodeGetTimelineResponse(await impl.getTimeline(wire.decodeGetTimelineRequest(r))),
    ),
    Ping: unary("Ping", async () => {
      await impl.ping();
      return {};
    }),
  };

  // Connections are closed (gracefully) after a few minutes so clients re-resolve `dns:///`
  // targets and spread over orchestrator replicas added since they connected.
  const server = new Server({ "grpc.max_connection_age_ms": 300_000, "grpc.max_connection_age_grace_ms": 30_000 });
  server.addService(service, handlers);
  // IPv6 literals need brackets in a gRPC address.
  const host = options.host.includes(":") && !options.host.startsWith("[") ? `[${options.host}]` : options.host;
  return new Promise((resolve, reject) => {
    server.bindAsync(
      `${host}:${options.port}`,
      options.credentials ?? ServerCredentials.createInsecure(),
      (err, port) => {
        if (err) {
          reject(new Error(`Cannot listen on ${host}:${options.port}: ${err.message}`, { cause: err }));
          return;
        }
        logger.info({ host: options.host, port }, "orchestrator gRPC server listening");
        const tryShutdown = () => new Promise<void>((done, fail) => server.tryShutdown((e) => (e ? fail(e) : done())));
        resolve({
          port,
          tryShutdown,
          forceShutdown: () => server.forceShutdown(),
          async shutdown(graceMs) {
            let timer: NodeJS.Timeout | undefined;
            const graceOver = new Promise<void>((done) => {
              timer = setTimeout(done, graceMs);
            });
            try {
              await Promise.race([tryShutdown(), graceOver]);
            } finally {
              clearTimeout(timer);
              // No-op when tryShutdown finished; otherwise cancels what is left.
              server.forceShutdown();
            }
          },
        });
      },
    );
  });
}
