import {
  Server,
  ServerCredentials,
  status,
  type Metadata,
  type sendUnaryData,
  type ServerUnaryCall,
  type ServerWritableStream,
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
  ValidationError,
  type Span,
} from "@tog/core";
import { errorToItemError, errorToStatus, isInternal } from "./grpc-errors.ts";
import type { SubmitTaskItem__Output } from "./generated/tog/orchestrator/v1/SubmitTaskItem.ts";
import type { SubmitTaskOutcome } from "./generated/tog/orchestrator/v1/SubmitTaskOutcome.ts";
import type { SubmitTasksRequest__Output } from "./generated/tog/orchestrator/v1/SubmitTasksRequest.ts";
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
  /** Called per call refused by `maxInFlight`, and per item of a batch refused by it (a metrics counter). */
  onShed?: ((method: string) => void) | undefined;
  /** Called per call received, with the method's name (a metrics counter). */
  onCall?: ((method: string) => void) | undefined;
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
  return contextOf(carrier);
}

/** The trace context of one item of a batch, from its own traceparent/tracestate. */
function itemContext(item: SubmitTaskItem__Output) {
  const carrier: Record<string, string> = {};
  if (item.traceparent) carrier.traceparent = item.traceparent;
  if (item.tracestate) carrier.tracestate = item.tracestate;
  return contextOf(carrier);
}

function contextOf(carrier: Record<string, string>) {
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

  /** A failed call (or batch item): its status on the span, internal errors logged with their cause. */
  function reportFailure(err: unknown, code: status, name: string, span: Span | undefined): void {
    span?.setAttribute("rpc.grpc.status_code", code);
    if (isInternal(err)) {
      span?.setStatus({ code: SpanStatusCode.ERROR, message: err instanceof Error ? err.message : String(err) });
      logger.error({ err, method: name }, "orchestrator call failed");
    } else logger.debug({ err, method: name }, "orchestrator call rejected");
  }

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
        reportFailure(err, reply.code, name, span);
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
      options.onCall?.(method);
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

  const submitName = `${ORCHESTRATOR_SERVICE_NAME}/SubmitTask`;

  /** One item of a batch, as a SubmitTask call would run it: its own span, its own outcome. */
  function submitItem(item: SubmitTaskItem__Output, index: number): Promise<SubmitTaskOutcome> {
    return withSpan(
      submitName,
      async (span): Promise<SubmitTaskOutcome> => {
        try {
          if (!item.request) throw new ValidationError("request: missing");
          const result = await impl.submitTask(wire.decodeSubmitTaskRequest(item.request));
          span.setAttribute("rpc.grpc.status_code", status.OK);
          return { index, task: wire.encodeSubmitTaskResponse(result) };
        } catch (err) {
          reportFailure(err, errorToStatus(err).code, submitName, span);
          return { index, error: errorToItemError(err) };
        }
      },
      {
        parent: itemContext(item),
        kind: SpanKind.SERVER,
        attributes: { "rpc.system": "grpc", "rpc.service": ORCHESTRATOR_SERVICE_NAME, "rpc.method": "SubmitTask" },
      },
    );
  }

  // Each item counts against `maxInFlight` like a call of its own: the items beyond the bound
  // are refused OVERLOADED one by one (answered at once), the others run. Each outcome is
  // written as soon as it is known, so a slow item holds no other back.
  async function submitBatch(call: ServerWritableStream<SubmitTasksRequest__Output, SubmitTaskOutcome>): Promise<void> {
    const items = call.request.items;
    const answer = (outcome: SubmitTaskOutcome) => {
      if (!call.cancelled) call.write(outcome);
    };
    if (call.cancelled) return;
    const admitted = maxInFlight > 0 ? Math.max(0, Math.min(items.length, maxInFlight - inFlight)) : items.length;
    inFlight += admitted;
    if (admitted < items.length) {
      const overloaded = errorToItemError(new OverloadedError("System overloaded"));
      for (let i = admitted; i < items.length; i++) {
        options.onShed?.("SubmitTask");
        answer({ index: i, error: overloaded });
      }
    }
    await Promise.all(
      items.slice(0, admitted).map((item, i) =>
        submitItem(item, i)
          .then(answer)
          .finally(() => inFlight--),
      ),
    );
    if (call.cancelled)
      logger.debug({ method: "SubmitTasks" }, "call cancelled or past its deadline before the answer");
    else call.end();
  }

  const handlers: TaskOrchestratorHandlers = {
    SubmitTask: unary("SubmitTask", async (r) =>
      wire.encodeSubmitTaskResponse(await impl.submitTask(wire.decodeSubmitTaskRequest(r))),
    ),
    SubmitTasks: (call) => {
      options.onCall?.("SubmitTasks");
      submitBatch(call).catch((err: unknown) =>
        logger.error({ err, method: "SubmitTasks" }, "answering a call failed"),
      );
    },
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
