import { randomUUID } from "node:crypto";
import { ConflictError, ForbiddenError, isUuid, NotFoundError } from "@tog/core";
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
  TimelineEntry,
  TimelineQuery,
  TimelineResult,
} from "@tog/proto";
import { isTerminalStatus } from "@tog/events";

// A stand-in for the orchestrator in gateway route tests: it keeps tasks in memory, honours the
// interface's ownership rules (reads of another user's task → NotFound, cancel/decide →
// Forbidden) and records every call, so tests can look at exactly what the routes sent.

interface StoredApproval {
  id: string;
  taskId: string;
  status: "pending" | "approved" | "denied";
}

export interface Calls {
  submitTask: SubmitTaskCommand[];
  getTask: { userId: string; taskId: string }[];
  listTasks: ListTasksQuery[];
  cancelTask: { userId: string; taskId: string; reason: string | undefined }[];
  decideApproval: ApprovalDecisionCommand[];
  getTaskEvents: TaskEventsQuery[];
  getTimeline: TimelineQuery[];
}

export class InMemoryOrchestrator implements TaskOrchestrator {
  readonly tasks = new Map<string, TaskDetail>();
  /** Session ref (UUID or external id) → owner and UUID. */
  readonly sessions = new Map<string, { id: string; userId: string }>();
  readonly events = new Map<string, string[]>();
  readonly timelines = new Map<string, TimelineEntry[]>();
  readonly approvals = new Map<string, StoredApproval>();
  calls: Calls = InMemoryOrchestrator.noCalls();
  /** Thrown by the next call of any method (then cleared). */
  failNext: Error | undefined;
  pingError: Error | undefined;
  private clock = Date.parse("2026-01-01T00:00:00.000Z");

  static noCalls(): Calls {
    return {
      submitTask: [],
      getTask: [],
      listTasks: [],
      cancelTask: [],
      decideApproval: [],
      getTaskEvents: [],
      getTimeline: [],
    };
  }

  resetCalls(): void {
    this.calls = InMemoryOrchestrator.noCalls();
  }

  private failIfAsked(): void {
    const err = this.failNext;
    if (err) {
      this.failNext = undefined;
      throw err;
    }
  }

  /** Strictly increasing timestamps, so "newest first" is well defined. */
  private now(): string {
    this.clock += 1000;
    return new Date(this.clock).toISOString();
  }

  /** Adds a task as if it had run; returns it. */
  seed(task: Partial<TaskDetail> & { userId: string }): TaskDetail {
    const createdAt = task.createdAt ?? this.now();
    const full: TaskDetail = {
      taskId: randomUUID(),
      sessionId: randomUUID(),
      query: "seeded",
      status: "QUEUED",
      mode: null,
      requestedMode: null,
      result: null,
      error: "",
      errorType: null,
      modelUsed: null,
      provider: null,
      usage: null,
      updatedAt: createdAt,
      startedAt: null,
      completedAt: null,
      ...task,
      createdAt,
    };
    this.tasks.set(full.taskId, full);
    return full;
  }

  private readable(userId: string, taskId: string): TaskDetail {
    const task = this.tasks.get(taskId);
    if (!task || task.userId !== userId) throw new NotFoundError("Task not found");
    return task;
  }

  private owned(userId: string, taskId: string): TaskDetail {
    const task = this.tasks.get(taskId);
    if (!task) throw new NotFoundError("Task not found");
    if (task.userId !== userId) throw new ForbiddenError();
    return task;
  }

  async submitTask(command: SubmitTaskCommand): Promise<SubmitTaskResult> {
    this.calls.submitTask.push(structuredClone(command));
    this.failIfAsked();
    let sessionId: string;
    let sessionRef: string;
    if (command.sessionId === undefined) {
      sessionId = randomUUID();
      sessionRef = sessionId;
      this.sessions.set(sessionId, { id: sessionId, userId: command.userId });
    } else {
      const known = this.sessions.get(command.sessionId);
      if (known && known.userId !== command.userId) throw new ForbiddenError();
      sessionId = known?.id ?? (isUuid(command.sessionId) ? command.sessionId.toLowerCase() : randomUUID());
      sessionRef = command.sessionId;
      this.sessions.set(command.sessionId, { id: sessionId, userId: command.userId });
    }
    const task = this.seed({
      userId: command.userId,
      sessionId,
      query: command.query,
      requestedMode: command.mode ?? null,
    });
    return { taskId: task.taskId, sessionId, sessionRef, status: "QUEUED", createdAt: task.createdAt };
  }

  async getTask(userId: string, taskId: string): Promise<TaskDetail> {
    this.calls.getTask.push({ userId, taskId });
    this.failIfAsked();
    return structuredClone(this.readable(userId, taskId));
  }

  async listTasks(query: ListTasksQuery): Promise<ListTasksResult> {
    this.calls.listTasks.push({ ...query });
    this.failIfAsked();
    const session = query.sessionId === undefined ? undefined : this.sessions.get(query.sessionId);
    const matching = [...this.tasks.values()]
      .filter((t) => t.userId === query.userId)
      .filter((t) => query.status === undefined || t.status === query.status)
      .filter(
        (t) =>
          query.sessionId === undefined ||
          (session !== undefined && session.userId === query.userId && t.sessionId === session.id),
      )
      .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
    return { tasks: matching.slice(query.offset, query.offset + query.limit), totalCount: matching.length };
  }

  async cancelTask(userId: string, taskId: string, reason: string | undefined): Promise<CancelTaskResult> {
    this.calls.cancelTask.push({ userId, taskId, reason });
    this.failIfAsked();
    const task = this.owned(userId, taskId);
    if (isTerminalStatus(task.status))
      return { accepted: false, status: task.status, message: `Task is already ${task.status}` };
    if (task.status === "QUEUED") {
      task.status = "CANCELLED";
      task.completedAt = this.now();
      return { accepted: true, status: "CANCELLED", message: "Task cancelled" };
    }
    return { accepted: true, status: task.status, message: "Cancellation requested" };
  }

  addApproval(taskId: string, id = `apr_${randomUUID().slice(0, 8)}`): string {
    this.approvals.set(id, { id, taskId, status: "pending" });
    return id;
  }

  async decideApproval(command: ApprovalDecisionCommand): Promise<ApprovalDecisionResult> {
    this.calls.decideApproval.push({ ...command });
    this.failIfAsked();
    this.owned(command.userId, command.taskId);
    const approval = this.approvals.get(command.approvalId);
    if (!approval || approval.taskId !== command.taskId) throw new NotFoundError("Approval not found");
    if (approval.status !== "pending") throw new ConflictError(`Approval is already ${approval.status}`);
    approval.status = command.approved ? "approved" : "denied";
    return {
      taskId: command.taskId,
      approvalId: command.approvalId,
      runId: command.runId ?? "",
      decision: approval.status,
    };
  }

  async getTaskEvents(query: TaskEventsQuery): Promise<TaskEventsResult> {
    this.calls.getTaskEvents.push({ ...query });
    this.failIfAsked();
    this.readable(query.userId, query.taskId);
    const all = this.events.get(query.taskId) ?? [];
    const after = query.afterSeq;
    const from = after === undefined ? all : all.filter((e) => (JSON.parse(e) as { seq: number }).seq > after);
    return { events: from.slice(query.offset, query.offset + query.limit), totalCount: all.length };
  }

  async getTimeline(query: TimelineQuery): Promise<TimelineResult> {
    this.calls.getTimeline.push({ ...query });
    this.failIfAsked();
    const task = this.readable(query.userId, query.taskId);
    const entries = (this.timelines.get(query.taskId) ?? []).map((e) => {
      if (query.includePayloads) return { ...e };
      const { payload: _payload, ...rest } = e;
      return rest;
    });
    return { taskId: task.taskId, status: task.status, entries };
  }

  async ping(): Promise<void> {
    if (this.pingError) throw this.pingError;
  }
}
