import { randomBytes } from "node:crypto";
import { publish, publishCore, publishSessionChanged, systemSubjects, type Bus } from "@tog/bus";
import {
  ConflictError,
  currentTraceIds,
  ForbiddenError,
  injectTraceContext,
  isUuid,
  newId,
  type Logger,
  NotFoundError,
} from "@tog/core";
import { pingDb, type Db, type DbPool } from "@tog/db";
import type { ModelTier } from "@tog/catalog";
import { eventMessageId, isTerminalEvent, isTerminalStatus } from "@tog/events";
import type {
  ApprovalDecisionCommand,
  ApprovalDecisionResult,
  CancelTaskResult,
  ListTasksQuery,
  ListTasksResult,
  SubmitTaskCommand,
  SubmitTaskResult,
  TaskDetail,
  TaskEventsQuery,
  TaskEventsResult,
  TaskOrchestrator,
  TimelineQuery,
  TimelineResult,
} from "@tog/proto";
import { cancelledState, finishStep, firstEventOf } from "../runtime/final-write.ts";
import type { TaskSpec } from "../runtime/flow-context.ts";
import { ApprovalDecisionRepository } from "./approval-decision.repository.ts";
import { CancelRepository } from "./cancel.repository.ts";
import { resolveSessionFilter } from "./session.resolver.ts";
import type { QueueBreaker } from "./queue-breaker.ts";
import { RunQueue } from "./run-queue.ts";
import { SubmitRepository } from "./submit.repository.ts";
import type { LocalSubmits } from "../runtime/local-submits.ts";
import { specFromCommand } from "./task-spec.ts";
import { terminalEventStored } from "./history-settle.ts";
import { TaskRepository, toDetail, type TaskRow } from "./task.repository.ts";

// The orchestrator's implementation of the gateway-facing API (served over gRPC).
//
// Submit is one PostgreSQL transaction that also enqueues the run: the task row and the
// session change are written, the run is published to the RUNS work queue (msg-id = task id)
// while the transaction is open, and only then is it committed. A publish failure rolls the
// task back (503/502, nothing written); a crash after the publish but before the commit leaves
// a run without a task, which the worker recognises under the same advisory lock and drops.
// So a submitted task is never lost and never enqueued twice.

export interface TaskServiceOptions {
  db: Db;
  /** The pg pool under `db`, for the submit transaction. */
  pool: DbPool;
  bus: Bus;
  logger: Logger;
  /** Tier of a submission that names none (the catalog default / DEFAULT_MODEL_TIER). */
  defaultModelTier?: ModelTier | undefined;
  /** Token budget of a new session. */
  sessionTokenBudget: number;
  /** Rejects specs naming unknown roles, templates or models (ValidationError → 400). */
  validateSpec: (spec: TaskSpec) => void;
  listEvents: (query: {
    taskId: string;
    limit: number;
    offset: number;
    afterSeq?: number | undefined;
  }) => Promise<{ events: string[]; totalCount: number }>;
  /** JSON text of the task's stored event with the highest seq (history-settle.ts). */
  lastEvent: (taskId: string) => Promise<string | null>;
  buildTimeline: (query: { taskId: string; includePayloads: boolean }) => Promise<TimelineResult>;
  onSubmitted?: (() => void) | undefined;
  /** Refuses submits at once while NATS is known to be away (queue-breaker.ts). */
  queueBreaker?: QueueBreaker | undefined;
  /** Open submits, seen by a worker of this process (ORCHESTRATOR_WORKER=on; runtime/local-submits.ts). */
  localSubmits?: LocalSubmits | undefined;
}

export class TaskService implements TaskOrchestrator {
  readonly #db: Db;
  readonly #bus: Bus;
  readonly #logger: Logger;
  readonly #options: TaskServiceOptions;
  readonly #tasks: TaskRepository;
  readonly #approvals: ApprovalDecisionRepository;
  readonly #submits: SubmitRepository;
  readonly #cancels: CancelRepository;
  readonly #pool: DbPool;
  readonly #runs: RunQueue;

  constructor(options: TaskServiceOptions) {
    this.#db = options.db;
    this.#bus = options.bus;
    this.#logger = options.logger;
    this.#options = options;
    this.#tasks = new TaskRepository({ db: options.db });
    this.#approvals = new ApprovalDecisionRepository({ db: options.db });
    this.#submits = new SubmitRepository({ pool: options.pool, localSubmits: options.localSubmits });
    this.#cancels = new CancelRepository({ pool: options.pool });
    this.#pool = options.pool;
    this.#runs = new RunQueue({ bus: options.bus, breaker: options.queueBreaker });
  }

  async submitTask(command: SubmitTaskCommand): Promise<SubmitTaskResult> {
    const spec = specFromCommand(command, this.#options.defaultModelTier);
    this.#options.validateSpec(spec);
    this.#runs.assertAccepting();
    const taskId = newId();
    const trace = injectTraceContext({});
    const traceId = currentTraceIds()?.trace_id ?? randomBytes(16).toString("hex");

    const result = await this.#submits.submit(
      {
        id: taskId,
        userId: command.userId,
        sessionRef: command.sessionId,
        query: command.query,
        requestedMode: command.mode ?? null,
        spec,
        traceId,
        traceparent: trace.traceparent ?? null,
        tokenBudget: this.#options.sessionTokenBudget,
        idempotency: command.idempotency,
      },
      () => this.#runs.enqueue(taskId),
    );
    if (result.kind === "existing") {
      this.#logger.info({ taskId: result.taskId }, "task submit replayed (same Idempotency-Key)");
      return {
        taskId: result.taskId,
        sessionId: result.sessionId,
        // The identity covers the body, so the session the client named is the one it named then.
        sessionRef: command.sessionId ?? result.sessionId,
        status: result.status as SubmitTaskResult["status"],
        createdAt: result.createdAt.toISOString(),
        replayed: true,
      };
    }
    // Only a session whose views may be cached needs a hint; one this submit created has none yet.
    if (result.session.viewsCached) publishSessionChanged(this.#bus, result.session.id);
    this.#options.onSubmitted?.();
    this.#logger.info({ taskId: taskId, sessionId: result.session.id }, "task submitted");
    return {
      taskId,
      sessionId: result.session.id,
      sessionRef: result.session.ref,
      status: "QUEUED",
      createdAt: result.createdAt.toISOString(),
    };
  }

  async getTask(userId: string, taskId: string): Promise<TaskDetail> {
    return toDetail(await this.#owned(userId, taskId, "read"));
  }

  async listTasks(query: ListTasksQuery): Promise<ListTasksResult> {
    let sessionId: string | undefined;
    if (query.sessionId !== undefined) {
      const found = await resolveSessionFilter(this.#pool, query.sessionId, query.userId);
      if (found === null) return { tasks: [], totalCount: 0 };
      sessionId = found;
    }
    const { rows, total } = await this.#tasks.list({
      userId: query.userId,
      status: query.status,
      sessionId,
      limit: query.limit,
      offset: query.offset,
    });
    return { tasks: rows.map(toDetail), totalCount: total };
  }

  async cancelTask(userId: string, taskId: string, reason: string | undefined): Promise<CancelTaskResult> {
    const outcome = await this.#cancels.transaction(async (tx) => {
      const task = await tx.lock(taskId);
      if (!task) throw new NotFoundError("Task not found");
      if (task.userId !== userId) throw new ForbiddenError();
      if (isTerminalStatus(task.status)) return { kind: "terminal" as const, status: task.status };
      await tx.request(taskId, reason ?? null, userId);
      if (task.status !== "QUEUED") return { kind: "requested" as const };
      // Never started: it ends here, with the final write a run would make. Its one event (the
      // terminal one, seq 1) is committed with the task; the worker that later drains the run
      // republishes it if we crash first.
      const final = cancelledState(reason ?? null);
      const event = firstEventOf(taskId, task.traceId, final);
      if (!(await tx.finishQueued({ taskId, write: final.write, step: finishStep(final, event) })))
        throw new Error(`task ${taskId} left QUEUED under its lock`);
      return { kind: "cancelled" as const, event, sessionId: task.sessionId };
    });

    if (outcome.kind === "terminal") {
      return { accepted: false, status: outcome.status, message: `Task is already ${outcome.status}` };
    }
    if (outcome.kind === "cancelled") {
      publishSessionChanged(this.#bus, outcome.sessionId);
      await publish(
        this.#bus,
        systemSubjects(this.#bus.prefix).events(taskId),
        new TextEncoder().encode(JSON.stringify(outcome.event)),
        {
          msgID: eventMessageId(outcome.event),
          expect: { lastSubjectSequence: 0 },
        },
      ).catch((err: unknown) =>
        this.#logger.warn({ err, taskId }, "publishing the cancel event failed; the worker will republish it"),
      );
      return { accepted: true, status: "CANCELLED", message: "Task cancelled before it started" };
    }
    publishCore(this.#bus, systemSubjects(this.#bus.prefix).signals(taskId), { signal: "cancel" });
    return { accepted: true, status: "RUNNING", message: "Cancellation requested; the task stops at its next step" };
  }

  async decideApproval(command: ApprovalDecisionCommand): Promise<ApprovalDecisionResult> {
    const decision = command.approved ? "approved" : "denied";
    const outcome = isUuid(command.taskId)
      ? await this.#approvals.decide({
          taskId: command.taskId,
          approvalId: command.approvalId,
          userId: command.userId,
          decision,
          approvedBy: command.approvedBy,
          feedback: command.feedback,
          modifiedAction: command.modifiedAction,
          runId: command.runId,
        })
      : ({ kind: "not_found" } as const);
    if (outcome.kind === "not_found")
      throw new NotFoundError(`No pending approval ${command.approvalId} for task ${command.taskId}`);
    if (outcome.kind === "forbidden") throw new ForbiddenError();
    if (outcome.kind === "closed") {
      throw new ConflictError(`Approval ${command.approvalId} was already decided: ${outcome.status}`, {
        details: { decision: outcome.status },
      });
    }
    publishCore(this.#bus, systemSubjects(this.#bus.prefix).signals(command.taskId), {
      signal: "approval",
      approval_id: command.approvalId,
    });
    return { taskId: command.taskId, approvalId: command.approvalId, runId: command.runId ?? "", decision };
  }

  async getTaskEvents(query: TaskEventsQuery): Promise<TaskEventsResult> {
    const row = await this.#owned(query.userId, query.taskId, "read");
    const list = () =>
      this.#options.listEvents({
        taskId: query.taskId,
        limit: query.limit,
        offset: query.offset,
        afterSeq: query.afterSeq,
      });
    const page = await list();
    // A page that ends with the terminal event (always the highest seq), or a task not finished,
    // is the history as it stands.
    const last = page.events.at(-1);
    if (!isTerminalStatus(row.status) || (last !== undefined && endsStream(last))) return page;
    const settled = await terminalEventStored(query.taskId, row.completed_at, { lastEvent: this.#options.lastEvent });
    return settled === "waited" ? list() : page;
  }

  async getTimeline(query: TimelineQuery): Promise<TimelineResult> {
    await this.#owned(query.userId, query.taskId, "read");
    return this.#options.buildTimeline({ taskId: query.taskId, includePayloads: query.includePayloads });
  }

  async ping(): Promise<void> {
    await Promise.all([pingDb(this.#db), this.#bus.ping(2_000)]);
  }

  /** Reads are owner-only and do not reveal other users' tasks: 404 either way. */
  async #owned(userId: string, taskId: string, _purpose: "read"): Promise<TaskRow> {
    const row = isUuid(taskId) ? await this.#tasks.get(taskId) : null;
    if (!row || row.user_id !== userId) throw new NotFoundError("Task not found");
    return row;
  }
}

/** The stored text of an event is the stream's terminal event. */
function endsStream(json: string): boolean {
  return isTerminalEvent(JSON.parse(json) as { type: string; data?: unknown });
}
