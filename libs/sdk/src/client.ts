import type { operations } from "./generated/api.ts";
import { sleep } from "./backoff.ts";
import { WaitTimeoutError } from "./errors.ts";
import { randomId } from "./ids.ts";
import { sseEvents, wsEvents, type StreamOptions } from "./stream.ts";
import { Transport, type RequestOptions, type TransportOptions } from "./transport.ts";
import {
  isTerminalStatus,
  type AccessToken,
  type AccessTokenRequest,
  type ApprovalDecisionRequest,
  type ApprovalDecisionResult,
  type CancelAccepted,
  type CancelConflict,
  type Health,
  type Ready,
  type SessionDetail,
  type SessionHistory,
  type SessionList,
  type SessionRenamed,
  type SessionSummary,
  type SessionTurn,
  type SessionTurns,
  type StoredEvent,
  type StreamSubmitted,
  type TaskDetail,
  type TaskEventsPage,
  type TaskList,
  type TaskStatusFilter,
  type TaskSubmission,
  type TaskSubmitted,
  type TaskSummary,
  type Timeline,
  type TogEvent,
  type EventOf,
  type EventType,
} from "./types.ts";

export type TogClientOptions = TransportOptions;

type Query<Op extends keyof operations> = NonNullable<operations[Op]["parameters"]["query"]>;

export interface SubmitOptions extends RequestOptions {
  /** Sent as Idempotency-Key; default: a fresh random UUID per call, so a retried call never makes a second task. */
  idempotencyKey?: string | undefined;
}

/** What POST /tasks returns, with its headers. */
export interface Submitted extends TaskSubmitted {
  /** X-Workflow-ID (equal to task_id). */
  workflow_id: string;
  /** X-Session-ID: the session the task belongs to (generated when none was given). */
  session_id: string | undefined;
  /** X-Idempotency-Cached: this answer is the replay of an earlier call with the same key. */
  replayed: boolean;
  idempotency_key: string;
}

export interface ListTasksOptions extends RequestOptions {
  status?: TaskStatusFilter | undefined;
  sessionId?: string | undefined;
  /** Tasks per request (1–100, default 50). */
  pageSize?: number | undefined;
  /** Tasks to skip first. */
  offset?: number | undefined;
  /** Stop after this many tasks. */
  limit?: number | undefined;
}

export interface WaitOptions extends RequestOptions {
  /** Give up after this long (WaitTimeoutError); default: wait as long as it takes. */
  timeoutMs?: number | undefined;
  /** Poll interval in ms (default 1000). */
  intervalMs?: number | undefined;
}

export interface CancelResult {
  /** true: cancellation accepted (202); false: the task was already terminal (409). */
  accepted: boolean;
  message: string;
  /** On 409: the terminal status (COMPLETED, FAILED, CANCELLED, TIMEOUT). */
  status?: string | undefined;
}

export interface DecisionInput {
  taskId: string;
  approvalId: string;
  approved: boolean;
  feedback?: string | undefined;
  modifiedAction?: string | undefined;
  runId?: string | undefined;
  approvedBy?: string | undefined;
}

/** An async iterable that is also a one-shot promise-free handle on a stream. */
export interface SubmittedStream extends StreamSubmitted {
  /** The task's events, resumed across disconnects, ending with the terminal event. */
  events: AsyncIterable<TogEvent>;
}

const encode = encodeURIComponent;

async function* paged<Page, Item>(
  fetchPage: (offset: number, size: number) => Promise<Page>,
  itemsOf: (page: Page) => Item[],
  totalOf: (page: Page) => number,
  options: { pageSize: number; offset?: number | undefined; limit?: number | undefined },
): AsyncGenerator<Item, void, undefined> {
  let offset = options.offset ?? 0;
  let left = options.limit ?? Number.POSITIVE_INFINITY;
  while (left > 0) {
    const page = await fetchPage(offset, Math.min(options.pageSize, left));
    const items = itemsOf(page);
    for (const item of items) {
      if (left-- <= 0) return;
      yield item;
    }
    offset += items.length;
    if (items.length === 0 || offset >= totalOf(page)) return;
  }
}

/** Tasks: submit, inspect, list, wait, cancel, history, timeline, live events. */
export class Tasks {
  readonly #t: Transport;
  readonly #client: TogClient;

  constructor(transport: Transport, client: TogClient) {
    this.#t = transport;
    this.#client = client;
  }

  /** POST /tasks. Safe to retry: an Idempotency-Key is generated per call unless given. */
  async submit(body: TaskSubmission, options: SubmitOptions = {}): Promise<Submitted> {
    const key = options.idempotencyKey ?? randomId();
    const res = await this.#t.call<TaskSubmitted>(
      { method: "POST", path: "/api/v1/tasks", body, safe: true },
      { ...options, headers: { ...options.headers, "Idempotency-Key": key } },
    );
    return {
      ...res.body,
      workflow_id: res.headers.get("X-Workflow-ID") ?? res.body.task_id,
      session_id: res.headers.get("X-Session-ID") ?? undefined,
      replayed: res.headers.get("X-Idempotency-Cached") === "true",
      idempotency_key: key,
    };
  }

  /**
   * POST /tasks/stream, then the task's events: one call that submits and follows.
   * `for await (const e of (await client.tasks.submitAndStream({query})).events)`.
   */
  async submitAndStream(
    body: Omit<TaskSubmission, "mode"> & { mode?: TaskSubmission["mode"] },
    options: SubmitOptions & Omit<StreamOptions, "signal"> = {},
  ): Promise<SubmittedStream> {
    const key = options.idempotencyKey ?? randomId();
    const res = await this.#t.call<StreamSubmitted>(
      { method: "POST", path: "/api/v1/tasks/stream", body, safe: true },
      { signal: options.signal, headers: { ...options.headers, "Idempotency-Key": key } },
    );
    const events = this.#client.stream(res.body.workflow_id, options);
    return { ...res.body, events };
  }

  /** GET /tasks/{id}. */
  async get(taskId: string, options: RequestOptions = {}): Promise<TaskDetail> {
    return (
      await this.#t.call<TaskDetail>({ method: "GET", path: `/api/v1/tasks/${encode(taskId)}`, safe: true }, options)
    ).body;
  }

  /** GET /tasks, one page as the server returns it. */
  async listPage(query: Query<"listTasks"> = {}, options: RequestOptions = {}): Promise<TaskList> {
    return (await this.#t.call<TaskList>({ method: "GET", path: "/api/v1/tasks", query, safe: true }, options)).body;
  }

  /** Every task matching the filters, newest first, fetched page by page as you iterate. */
  list(options: ListTasksOptions = {}): AsyncIterable<TaskSummary> {
    return paged(
      (offset, limit) =>
        this.listPage({ offset, limit, status: options.status, session_id: options.sessionId }, options),
      (p) => p.tasks,
      (p) => p.total_count,
      { pageSize: options.pageSize ?? 50, offset: options.offset, limit: options.limit },
    );
  }

  /** Polls GET /tasks/{id} until the task is COMPLETED, FAILED, CANCELLED or TIMEOUT. */
  async waitUntilDone(taskId: string, options: WaitOptions = {}): Promise<TaskDetail> {
    const deadline = options.timeoutMs === undefined ? Number.POSITIVE_INFINITY : Date.now() + options.timeoutMs;
    const interval = options.intervalMs ?? 1_000;
    for (;;) {
      const task = await this.get(taskId, options);
      if (isTerminalStatus(task.status)) return task;
      const left = deadline - Date.now();
      if (left <= 0) throw new WaitTimeoutError(`Task ${taskId} is still ${task.status} after ${options.timeoutMs} ms`);
      await sleep(Math.min(interval, left), options.signal);
    }
  }

  /** POST /tasks/{id}/cancel. A task that is already terminal is not an error: `accepted` is false. */
  async cancel(taskId: string, reason?: string, options: RequestOptions = {}): Promise<CancelResult> {
    const res = await this.#t.call<CancelAccepted | CancelConflict>(
      {
        method: "POST",
        path: `/api/v1/tasks/${encode(taskId)}/cancel`,
        body: reason === undefined ? {} : { reason },
        safe: true,
        accept: [409],
      },
      options,
    );
    const b = res.body as { message: string; status?: string };
    return { accepted: res.status === 202, message: b.message, ...(res.status === 409 ? { status: b.status } : {}) };
  }

  /** GET /tasks/{id}/events, one page. */
  async eventsPage(
    taskId: string,
    query: Query<"getTaskEvents"> = {},
    options: RequestOptions = {},
  ): Promise<TaskEventsPage> {
    return (
      await this.#t.call<TaskEventsPage>(
        { method: "GET", path: `/api/v1/tasks/${encode(taskId)}/events`, query, safe: true },
        options,
      )
    ).body;
  }

  /** The task's stored events in seq order, page by page (`after_seq` cursor). */
  async *events(
    taskId: string,
    options: RequestOptions & { afterSeq?: number; pageSize?: number } = {},
  ): AsyncGenerator<StoredEvent, void, undefined> {
    let after = options.afterSeq ?? 0;
    for (;;) {
      const page = await this.eventsPage(taskId, { after_seq: after, limit: options.pageSize ?? 200 }, options);
      for (const e of page.events) yield e;
      if (page.events.length === 0 || page.next_after_seq === null) return;
      after = page.next_after_seq;
    }
  }

  /** GET /tasks/{id}/timeline. */
  async timeline(
    taskId: string,
    query: Query<"getTaskTimeline"> = {},
    options: RequestOptions = {},
  ): Promise<Timeline> {
    return (
      await this.#t.call<Timeline>(
        { method: "GET", path: `/api/v1/tasks/${encode(taskId)}/timeline`, query, safe: true },
        options,
      )
    ).body;
  }
}

/** Human approval decisions. */
export class Approvals {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  /** POST /approvals/decision. Not retried automatically (a decision is sent once). */
  async decide(input: DecisionInput, options: RequestOptions = {}): Promise<ApprovalDecisionResult> {
    const body: ApprovalDecisionRequest = {
      workflow_id: input.taskId,
      approval_id: input.approvalId,
      approved: input.approved,
      ...(input.feedback !== undefined ? { feedback: input.feedback } : {}),
      ...(input.modifiedAction !== undefined ? { modified_action: input.modifiedAction } : {}),
      ...(input.runId !== undefined ? { run_id: input.runId } : {}),
      ...(input.approvedBy !== undefined ? { approved_by: input.approvedBy } : {}),
    } as ApprovalDecisionRequest;
    return (
      await this.#t.call<ApprovalDecisionResult>(
        { method: "POST", path: "/api/v1/approvals/decision", body, safe: false },
        options,
      )
    ).body;
  }

  approve(
    taskId: string,
    approvalId: string,
    feedback?: string,
    options?: RequestOptions,
  ): Promise<ApprovalDecisionResult> {
    return this.decide({ taskId, approvalId, approved: true, feedback }, options);
  }

  deny(
    taskId: string,
    approvalId: string,
    feedback?: string,
    options?: RequestOptions,
  ): Promise<ApprovalDecisionResult> {
    return this.decide({ taskId, approvalId, approved: false, feedback }, options);
  }
}

/** The six session endpoints. */
export class Sessions {
  readonly #t: Transport;

  constructor(transport: Transport) {
    this.#t = transport;
  }

  async listPage(query: Query<"listSessions"> = {}, options: RequestOptions = {}): Promise<SessionList> {
    return (await this.#t.call<SessionList>({ method: "GET", path: "/api/v1/sessions", query, safe: true }, options))
      .body;
  }

  /** Every session, most recent activity first, page by page. */
  list(
    options: RequestOptions & { pageSize?: number; offset?: number; limit?: number } = {},
  ): AsyncIterable<SessionSummary> {
    return paged(
      (offset, limit) => this.listPage({ offset, limit }, options),
      (p) => p.sessions,
      (p) => p.total_count,
      { pageSize: options.pageSize ?? 50, offset: options.offset, limit: options.limit },
    );
  }

  async get(sessionId: string, options: RequestOptions = {}): Promise<SessionDetail> {
    return (
      await this.#t.call<SessionDetail>(
        { method: "GET", path: `/api/v1/sessions/${encode(sessionId)}`, safe: true },
        options,
      )
    ).body;
  }

  async history(sessionId: string, options: RequestOptions = {}): Promise<SessionHistory> {
    return (
      await this.#t.call<SessionHistory>(
        { method: "GET", path: `/api/v1/sessions/${encode(sessionId)}/history`, safe: true },
        options,
      )
    ).body;
  }

  /** GET /sessions/{id}/events: one page of turns. */
  async turnsPage(
    sessionId: string,
    query: Query<"getSessionEvents"> = {},
    options: RequestOptions = {},
  ): Promise<SessionTurns> {
    return (
      await this.#t.call<SessionTurns>(
        { method: "GET", path: `/api/v1/sessions/${encode(sessionId)}/events`, query, safe: true },
        options,
      )
    ).body;
  }

  /** Every turn of the session, oldest first, page by page. */
  async *turns(
    sessionId: string,
    options: RequestOptions & { pageSize?: number; includePayload?: boolean } = {},
  ): AsyncGenerator<SessionTurn, void, undefined> {
    const size = options.pageSize ?? 100;
    for (let offset = 0; ; offset += size) {
      const page = await this.turnsPage(
        sessionId,
        { offset, limit: size, ...(options.includePayload ? { include_payload: true } : {}) },
        options,
      );
      for (const t of page.turns) yield t;
      if (page.turns.length < size) return;
    }
  }

  async rename(sessionId: string, title: string, options: RequestOptions = {}): Promise<SessionRenamed> {
    return (
      await this.#t.call<SessionRenamed>(
        { method: "PATCH", path: `/api/v1/sessions/${encode(sessionId)}`, body: { title }, safe: true },
        options,
      )
    ).body;
  }

  /** Soft delete; deleting again is fine (204 both times). */
  async delete(sessionId: string, options: RequestOptions = {}): Promise<void> {
    await this.#t.call<undefined>(
      { method: "DELETE", path: `/api/v1/sessions/${encode(sessionId)}`, safe: true },
      options,
    );
  }
}

/**
 * Client of the Task Orchestration Gateway API.
 *
 *     const tog = new TogClient({ baseUrl: "http://localhost:8080", apiKey: process.env.TOG_API_KEY });
 *     const { task_id } = await tog.tasks.submit({ query: "Summarize…" });
 *     for await (const e of tog.stream(task_id)) console.log(e.seq, e.type);
 */
export class TogClient {
  readonly transport: Transport;
  readonly tasks: Tasks;
  readonly approvals: Approvals;
  readonly sessions: Sessions;

  constructor(options: TogClientOptions) {
    this.transport = new Transport(options);
    this.tasks = new Tasks(this.transport, this);
    this.approvals = new Approvals(this.transport);
    this.sessions = new Sessions(this.transport);
  }

  /**
   * A task's live events (replayed from `lastEventId`, or from the start), resumed across
   * disconnects without gaps or duplicates, ending after the terminal event.
   */
  stream<T extends EventType = EventType>(
    taskId: string,
    options: StreamOptions & { types?: readonly T[] | undefined } = {},
  ): AsyncIterable<EventOf<T>> {
    // With `types`, only events of those types are yielded, so the element type narrows to them.
    const events =
      options.transport === "ws"
        ? wsEvents(this.transport, taskId, options)
        : sseEvents(this.transport, taskId, options);
    return events as AsyncIterable<EventOf<T>>;
  }

  /** GET /health at the API base. */
  async health(options: RequestOptions = {}): Promise<Health> {
    return (await this.transport.call<Health>({ method: "GET", path: "/api/v1/health", safe: true }, options)).body;
  }

  /** GET /readiness; a 503 (not ready) throws ServiceUnavailableError after the retries. */
  async readiness(options: RequestOptions = {}): Promise<Ready> {
    return (await this.transport.call<Ready>({ method: "GET", path: "/api/v1/readiness", safe: true }, options)).body;
  }

  /** GET /openapi.json: the server's OpenAPI document (the one this SDK was generated from ships as `@tog/sdk/openapi.json`). */
  async openApi(options: RequestOptions = {}): Promise<Record<string, unknown>> {
    return (
      await this.transport.call<Record<string, unknown>>(
        { method: "GET", path: "/api/v1/openapi.json", safe: true },
        options,
      )
    ).body;
  }

  /**
   * POST /auth/token: exchanges the client's API key for a short-lived bearer token (for a
   * backend that hands streams to a browser). Not retried: each call mints a token.
   */
  async accessToken(body: AccessTokenRequest = {}, options: RequestOptions = {}): Promise<AccessToken> {
    return (
      await this.transport.call<AccessToken>({ method: "POST", path: "/api/v1/auth/token", body, safe: false }, options)
    ).body;
  }
}
