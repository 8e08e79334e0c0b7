import { isUuid, NotFoundError } from "@tog/core";
import type { Db } from "@tog/db";
import { WORKFLOW_AGENT_ID } from "@tog/events";
import type { TaskStatus, TimelineEntry, TimelineResult } from "@tog/proto";
import {
  type ApprovalRow,
  readTimelineRows,
  type SignalRow,
  type StepRow,
  type TaskRow,
} from "./timeline.repository.ts";

// The timeline of a task, built from what the runtime recorded: the task itself, its
// durable steps (task_steps), its approvals and the signals it received. The same rows always
// give the same entries in the same order, byte for byte:
//   order = (started_at, kind rank, source, key), all compared exactly (no locale);
//   seq   = 1-based position in that order.
// A child task's steps are stored under keys prefixed by the child step's key and a slash
// (`child:a/llm:0`, `child:a/child:b/tool:1`); `parent` is that prefix, null at the top level.

export interface BuildTimelineOptions {
  db: Db;
  taskId: string;
  /** Adds `payload`: the step output, the approval's details, the signal's payload, the task's outcome. */
  includePayloads: boolean;
}

/** Rank of each kind among entries starting in the same millisecond; unknown kinds go last. */
const KIND_RANK: Readonly<Record<string, number>> = {
  workflow: 0,
  start: 1,
  plan: 2,
  team: 3,
  child: 4,
  llm: 5,
  tool: 6,
  approval: 7,
  timer: 8,
  signal: 9,
  synthesis: 10,
  finish: 11,
};
const UNKNOWN_KIND_RANK = 99;

// Sources, for entries of the same kind and time (an approval step and its approval record).
const SOURCE_WORKFLOW = 0;
const SOURCE_STEP = 1;
const SOURCE_APPROVAL = 2;
const SOURCE_SIGNAL = 3;

interface Draft {
  kind: string;
  name: string;
  agentId: string;
  status: string;
  startedAt: Date;
  completedAt: Date | null;
  parent: string | null;
  payload: () => unknown;
  source: number;
  key: string;
}

export async function buildTimeline(options: BuildTimelineOptions): Promise<TimelineResult> {
  const { db, taskId, includePayloads } = options;
  if (!isUuid(taskId)) throw new NotFoundError("Task not found");
  const id = taskId.toLowerCase();

  const { tasks, steps, approvals, signals } = await readTimelineRows(db, id);
  const task = tasks[0];
  if (!task) throw new NotFoundError("Task not found");

  const drafts: Draft[] = [taskDraft(task)];
  for (const s of steps) drafts.push(stepDraft(s));
  for (const a of approvals) drafts.push(approvalDraft(a));
  for (const s of signals) drafts.push(signalDraft(s));
  drafts.sort(compareDrafts);

  const entries = drafts.map((d, i): TimelineEntry => {
    const entry: TimelineEntry = {
      seq: i + 1,
      kind: d.kind,
      name: d.name,
      agentId: d.agentId,
      status: d.status,
      startedAt: d.startedAt.toISOString(),
      completedAt: d.completedAt ? d.completedAt.toISOString() : null,
      durationMs: d.completedAt ? Math.max(0, d.completedAt.getTime() - d.startedAt.getTime()) : null,
      parent: d.parent,
    };
    if (includePayloads) entry.payload = d.payload();
    return entry;
  });
  return { taskId: id, status: task.status as TaskStatus, entries };
}

function taskDraft(t: TaskRow): Draft {
  return {
    kind: "workflow",
    name: "workflow",
    agentId: WORKFLOW_AGENT_ID,
    status: t.status,
    // A queued task has not started: its timeline begins when it was submitted.
    startedAt: t.started_at ?? t.created_at,
    completedAt: t.completed_at,
    parent: null,
    payload: () => ({ query: t.query, mode: t.mode, result: t.result, error: t.error, error_type: t.error_type }),
    source: SOURCE_WORKFLOW,
    key: "",
  };
}

function stepDraft(s: StepRow): Draft {
  const slash = s.key.lastIndexOf("/");
  return {
    kind: s.kind,
    name: s.name,
    agentId: s.agent_id,
    status: s.status,
    startedAt: s.started_at,
    completedAt: s.completed_at,
    parent: slash > 0 ? s.key.slice(0, slash) : null,
    payload: () => parseJson(s.output),
    source: SOURCE_STEP,
    key: s.key,
  };
}

function approvalDraft(a: ApprovalRow): Draft {
  return {
    kind: "approval",
    name: a.tool_name,
    agentId: WORKFLOW_AGENT_ID,
    status: a.status,
    startedAt: a.requested_at,
    completedAt: a.decided_at,
    parent: null,
    payload: () => ({
      approval_id: a.id,
      tool_name: a.tool_name,
      operation: a.operation,
      risk_level: a.risk_level,
      details: parseJson(a.details),
      timeout_seconds: a.timeout_seconds,
      expires_at: a.expires_at.toISOString(),
      decided_by: a.decided_by,
      comments: a.comments,
      modified_action: a.modified_action,
      run_id: a.run_id,
    }),
    source: SOURCE_APPROVAL,
    key: a.id,
  };
}

function signalDraft(s: SignalRow): Draft {
  return {
    kind: "signal",
    name: s.name,
    agentId: WORKFLOW_AGENT_ID,
    status: "received",
    startedAt: s.created_at,
    completedAt: s.created_at,
    parent: null,
    payload: () => parseJson(s.payload),
    source: SOURCE_SIGNAL,
    // Ids are bigserial: pad so text order is numeric order.
    key: s.id.padStart(20, "0"),
  };
}

function compareDrafts(a: Draft, b: Draft): number {
  return (
    a.startedAt.getTime() - b.startedAt.getTime() ||
    rankOf(a.kind) - rankOf(b.kind) ||
    a.source - b.source ||
    compareText(a.key, b.key) ||
    compareText(a.kind, b.kind)
  );
}

function rankOf(kind: string): number {
  return KIND_RANK[kind] ?? UNKNOWN_KIND_RANK;
}

/** Code-unit order: the same on every machine, unlike localeCompare. */
function compareText(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function parseJson(text: string | null): unknown {
  return text === null ? null : JSON.parse(text);
}
