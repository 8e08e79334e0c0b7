import {
  Client,
  Metadata,
  credentials,
  status,
  type ChannelCredentials,
  type ChannelOptions,
  type ClientReadableStream,
  type ServiceError,
} from "@grpc/grpc-js";
import type { MethodDefinition } from "@grpc/proto-loader";
import {
  SpanKind,
  UpstreamUnavailableError,
  autoInstrumented,
  injectTraceContext,
  spansExported,
  withSpan,
  type Logger,
  type Span,
} from "@tog/core";
import { DEFAULT_ORCHESTRATOR_DEADLINE_MS } from "./config.ts";
import { itemErrorToError, statusToError } from "./grpc-errors.ts";
import { CallBatcher, type Settled } from "./call-batcher.ts";
import type { SubmitTaskOutcome__Output } from "./generated/tog/orchestrator/v1/SubmitTaskOutcome.ts";
import type { SubmitTaskRequest } from "./generated/tog/orchestrator/v1/SubmitTaskRequest.ts";
import { ORCHESTRATOR_SERVICE_NAME, orchestratorServiceDefinition } from "./orchestrator-definition.ts";
import type { SubmitTaskResult, TaskOrchestrator } from "./task-orchestrator.ts";
import * as wire from "./wire-codec.ts";

export interface OrchestratorClientOptions {
  /** host:port or any gRPC target (dns:///host:port). */
  address: string;
  /** Deadline of every call. */
  deadlineMs?: number | undefined;
  logger: Logger;
  /** Extra gRPC channel options (tests: reconnect back-off). */
  channelOptions?: ChannelOptions | undefined;
  /** TLS (tls.ts clientCredentialsOf); default plaintext. */
  credentials?: ChannelCredentials | undefined;
  /**
   * Submit calls in flight at once before further submits wait and go out together in one
   * SubmitTasks call (call-batcher.ts); 0 = one SubmitTask call per submit. Ignored while spans
   * are exported: each submit then keeps its own call and span.
   */
  submitBatchesInFlight?: number | undefined;
  /** After this long in flight a submit call no longer holds the next ones back (default 25 ms). */
  submitStallMs?: number | undefined;
}

export type OrchestratorClient = TaskOrchestrator & {
  /** Closes the channel; calls in flight fail with UpstreamUnavailableError. */
  close(): void;
};

const CHANNEL_OPTIONS: ChannelOptions = {
  // Event pages and timelines with payloads can outgrow gRPC's 4 MiB default.
  "grpc.max_receive_message_length": 64 * 1024 * 1024,
  // An orchestrator that restarted is used again within about 2 s (grpc-js waits up to 120 s by
  // default), so a rolling restart never finds every backend still in back-off.
  "grpc.initial_reconnect_backoff_ms": 250,
  "grpc.max_reconnect_backoff_ms": 2_000,
  // With a dns:/// target naming several orchestrators, spread calls over all of them
  // instead of pinning every call to the first address.
  // A call that meets an orchestrator going away (rolling restart: GOAWAY, a connection cut
  // before the call was answered) is tried again on another one within the same deadline
  // (docs/reliability.md "Rolling restart"). The server answers UNAVAILABLE only when it did
  // nothing; a submit whose answer was lost after the work is covered by Idempotency-Key.
  "grpc.service_config": JSON.stringify({
    loadBalancingConfig: [{ round_robin: {} }],
    methodConfig: [
      {
        name: [{ service: ORCHESTRATOR_SERVICE_NAME }],
        retryPolicy: {
          maxAttempts: 4,
          initialBackoff: "0.05s",
          maxBackoff: "0.5s",
          backoffMultiplier: 2,
          retryableStatusCodes: ["UNAVAILABLE"],
        },
      },
    ],
  }),
};

/** How long submits go one call each after an orchestrator refused SubmitTasks as unknown. */
const BATCHES_REFUSED_RETRY_MS = 60_000;

class Unimplemented extends Error {}

// A submit call in flight longer than this no longer holds the next ones back (call-batcher.ts):
// well above a submit's usual round trip under load, far below its deadline.
const SUBMIT_STALL_MS = 25;

// Codes the transport produced or that hide their cause: worth a warning on the gateway.
const TRANSPORT_CODES = new Set<number>([
  status.UNAVAILABLE,
  status.DEADLINE_EXCEEDED,
  status.INTERNAL,
  status.UNKNOWN,
  status.UNIMPLEMENTED,
]);

/** The orchestrator over gRPC: every call has a deadline and carries the active trace context. */
export function createOrchestratorClient(options: OrchestratorClientOptions): OrchestratorClient {
  const { logger } = options;
  const deadlineMs = options.deadlineMs ?? DEFAULT_ORCHESTRATOR_DEADLINE_MS;
  const service = orchestratorServiceDefinition();
  const client = new Client(options.address, options.credentials ?? credentials.createInsecure(), {
    ...CHANNEL_OPTIONS,
    ...options.channelOptions,
  });

  function logFailure(method: string, err: ServiceError): void {
    const level = TRANSPORT_CODES.has(err.code) ? "warn" : "debug";
    logger[level]({ method, grpc_code: status[err.code], grpc_details: err.details }, "orchestrator call failed");
  }

  // `span`: the hand-made client span; undefined when the gRPC instrumentation makes one (and
  // writes its own context into the metadata). `trace`: the trace headers to send (a batch of
  // one sends its item's own).
  function send<Req, ReqOut, ResIn, ResOut>(
    method: MethodDefinition<Req, ResIn, ReqOut, ResOut>,
    request: Req,
    span: Span | undefined,
    trace: Record<string, string> | undefined = span ? injectTraceContext() : undefined,
    deadline = Date.now() + deadlineMs,
  ): Promise<ResOut> {
    const name = method.path.slice(1);
    return new Promise<ResOut>((resolve, reject) => {
      const metadata = new Metadata();
      if (trace) for (const [key, value] of Object.entries(trace)) metadata.set(key, value);
      const callOptions = { deadline };
      const onDone = (err: ServiceError | null, response?: ResOut) => {
        if (err) {
          span?.setAttribute("rpc.grpc.status_code", err.code);
          logFailure(name, err);
          reject(statusToError(err));
          return;
        }
        span?.setAttribute("rpc.grpc.status_code", status.OK);
        resolve(response as ResOut);
      };
      try {
        client.makeUnaryRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          metadata,
          callOptions,
          onDone,
        );
      } catch (err) {
        // A closed channel throws synchronously instead of failing the call.
        reject(new UpstreamUnavailableError("Orchestrator unavailable", { cause: err }));
      }
    });
  }

  function call<Req, ReqOut, ResIn, ResOut>(
    method: MethodDefinition<Req, ResIn, ReqOut, ResOut>,
    request: Req,
  ): Promise<ResOut> {
    // With the preload's instrumentations the gRPC instrumentation makes the client span (docs/architecture.md,
    // "Tracing").
    if (autoInstrumented()) return send(method, request, undefined);
    const name = method.path.slice(1);
    return withSpan(name, (span) => send(method, request, span), {
      kind: SpanKind.CLIENT,
      attributes: {
        "rpc.system": "grpc",
        "rpc.service": ORCHESTRATOR_SERVICE_NAME,
        "rpc.method": name.slice(ORCHESTRATOR_SERVICE_NAME.length + 1),
      },
    });
  }

  // Submits waiting for a call in flight go out together (docs/performance.md "Submit"). Each
  // keeps its own trace headers and its own deadline, counted from when it was made.
  interface QueuedSubmit {
    request: SubmitTaskRequest;
    trace: Record<string, string>;
    deadline: number;
  }
  // An orchestrator of a release before SubmitTasks (a rolling upgrade that reached the gateways
  // first) answers UNIMPLEMENTED: its items are sent again one call each, and submits go one
  // call each for a while before a batch is tried again.
  let batchesRefusedUntil = 0;
  const sendOne = async (item: QueuedSubmit) =>
    wire.decodeSubmitTaskResponse(await send(service.SubmitTask, item.request, undefined, item.trace, item.deadline));

  async function sendSubmits(
    items: QueuedSubmit[],
    settle: (index: number, outcome: Settled<SubmitTaskResult>) => void,
  ): Promise<void> {
    if (items.length === 1 || Date.now() < batchesRefusedUntil) {
      await Promise.all(
        items.map((item, i) =>
          sendOne(item).then(
            (value) => settle(i, { ok: true, value }),
            (error: unknown) => settle(i, { ok: false, error }),
          ),
        ),
      );
      return;
    }
    const answered = new Set<number>();
    try {
      await sendBatch(items, (index, outcome) => {
        answered.add(index);
        settle(index, outcome);
      });
    } catch (err) {
      if (!(err instanceof Unimplemented) || answered.size > 0) throw err;
      batchesRefusedUntil = Date.now() + BATCHES_REFUSED_RETRY_MS;
      logger.warn("the orchestrator does not know SubmitTasks (an older release): sending submits one call each");
      await sendSubmits(items, settle);
    }
  }

  async function sendBatch(
    items: QueuedSubmit[],
    settle: (index: number, outcome: Settled<SubmitTaskResult>) => void,
  ): Promise<void> {
    const method = service.SubmitTasks;
    const request = {
      items: items.map((i) => ({
        request: i.request,
        traceparent: i.trace.traceparent ?? "",
        tracestate: i.trace.tracestate ?? "",
      })),
    };
    await new Promise<void>((resolve, reject) => {
      let stream: ClientReadableStream<SubmitTaskOutcome__Output>;
      try {
        stream = client.makeServerStreamRequest(
          method.path,
          method.requestSerialize,
          method.responseDeserialize,
          request,
          new Metadata(),
          { deadline: Math.min(...items.map((i) => i.deadline)) },
        );
      } catch (err) {
        reject(new UpstreamUnavailableError("Orchestrator unavailable", { cause: err }));
        return;
      }
      stream.on("data", (o: SubmitTaskOutcome__Output) => {
        if (o.task) {
          let value: SubmitTaskResult;
          try {
            value = wire.decodeSubmitTaskResponse(o.task);
          } catch (error) {
            // An answer this client cannot read fails its item, not the process.
            settle(o.index, { ok: false, error });
            return;
          }
          settle(o.index, { ok: true, value });
          return;
        }
        const error = itemErrorToError(o.error ?? { code: "INTERNAL", message: "no outcome", details_json: "" });
        logger.debug({ method: method.path.slice(1), error_code: error.code }, "orchestrator call failed");
        settle(o.index, { ok: false, error });
      });
      stream.on("error", (err: ServiceError) => {
        if (err.code === status.UNIMPLEMENTED) {
          reject(new Unimplemented());
          return;
        }
        logFailure(method.path.slice(1), err);
        reject(statusToError(err));
      });
      stream.on("end", () => resolve());
    });
  }
  const batchesInFlight = options.submitBatchesInFlight ?? 0;
  const submits =
    batchesInFlight > 0
      ? new CallBatcher<QueuedSubmit, SubmitTaskResult>({
          send: sendSubmits,
          maxInFlight: batchesInFlight,
          maxBatch: 256,
          stallMs: options.submitStallMs ?? SUBMIT_STALL_MS,
        })
      : undefined;

  return {
    async submitTask(command) {
      const request = wire.encodeSubmitTaskRequest(command);
      if (submits && !spansExported())
        return submits.add({ request, trace: injectTraceContext(), deadline: Date.now() + deadlineMs });
      return wire.decodeSubmitTaskResponse(await call(service.SubmitTask, request));
    },
    async getTask(userId, taskId) {
      const response = await call(service.GetTask, wire.encodeGetTaskRequest(userId, taskId));
      return wire.decodeTaskDetail(response.task);
    },
    async listTasks(query) {
      return wire.decodeListTasksResponse(await call(service.ListTasks, wire.encodeListTasksRequest(query)));
    },
    async cancelTask(userId, taskId, reason) {
      return wire.decodeCancelTaskResponse(
        await call(service.CancelTask, wire.encodeCancelTaskRequest(userId, taskId, reason)),
      );
    },
    async decideApproval(command) {
      return wire.decodeDecideApprovalResponse(
        await call(service.DecideApproval, wire.encodeDecideApprovalRequest(command)),
      );
    },
    async getTaskEvents(query) {
      return wire.decodeGetTaskEventsResponse(
        await call(service.GetTaskEvents, wire.encodeGetTaskEventsRequest(query)),
      );
    },
    async getTimeline(query) {
      return wire.decodeGetTimelineResponse(await call(service.GetTimeline, wire.encodeGetTimelineRequest(query)));
    },
    async ping() {
      await call(service.Ping, {});
    },
    close() {
      client.close();
    },
  };
}
