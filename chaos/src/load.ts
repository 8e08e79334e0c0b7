// The clients of a scenario: submit a fixed number of tasks of every kind at a steady rate,
// each with its own Idempotency-Key, and retry a failed submission with the same key after its
// Retry-After (what a well-behaved client does: the key makes the retry safe). Tasks that ask for
// an approval — the task approval, or workspace_write's (a high-risk tool) — are approved by an
// approver loop. Every failed HTTP attempt is counted.
import { randomUUID } from "node:crypto";

export type TaskKind = "simple" | "standard" | "complex" | "tool" | "approval" | "write";

export const TASK_KINDS: Record<
  Exclude<TaskKind, "write">,
  { query: string; mode: string; context?: Record<string, unknown> }
> = {
  simple: { query: "Say hello in one short sentence", mode: "simple" },
  standard: { query: "Explain briefly why the sky is blue", mode: "standard" },
  // A planned flow: its subtasks run as child tasks.
  complex: { query: "Research the history of Rome, then compare it with Athens, and summarize both", mode: "complex" },
  tool: { query: "What is 12*(3+4)?", mode: "standard" },
  approval: { query: "Summarize the plan", mode: "simple", context: { require_approval: true } },
};

/** The side effect a write task asks for: `value` stored under workspace `key`, both unique to the task. */
export interface WriteEffect {
  key: string;
  value: string;
}

export interface Submission {
  kind: TaskKind;
  key: string;
  /** write tasks: the effect that must happen exactly once. */
  write?: WriteEffect;
  taskId?: string;
  /** HTTP attempts it took (1 = first try). */
  attempts: number;
  submittedAt: number;
}

export interface FailedRequest {
  at: number;
  what: string;
  /** 0: no answer (refused, reset or past the client's deadline). */
  status: number;
  error: string;
  /** A 429/503 with Retry-After: load shed as designed, the client retries later. */
  shed: boolean;
}

export interface LoadOptions {
  baseUrl: string;
  apiKey: string;
  tasks: number;
  /** Submissions started per second. */
  rate: number;
  /** How long one submission keeps retrying before it counts as lost (ms). */
  retryForMs?: number;
  /** Per-request deadline (ms): a request hanging past it is a failure. */
  requestTimeoutMs?: number;
}

export interface Load {
  readonly submissions: Submission[];
  readonly failures: FailedRequest[];
  /** Resolves when every submission got a task id or gave up. */
  readonly submitted: Promise<void>;
  /** Stops the approver. */
  stop(): void;
}

const kinds: TaskKind[] = ["simple", "standard", "complex", "tool", "approval", "write"];

/**
 * The request body of a submission. A write task has the analyst role (its tools include
 * workspace_write) and a query the offline provider reads as a workspace_write call.
 */
export function taskBody(s: Pick<Submission, "kind" | "write">): Record<string, unknown> {
  if (s.kind === "write") {
    if (!s.write) throw new Error("a write task needs its effect");
    return {
      query: `Save "${s.write.value}" to workspace key ${s.write.key}`,
      mode: "standard",
      context: { role: "analyst" },
    };
  }
  const spec = TASK_KINDS[s.kind];
  return { query: spec.query, mode: spec.mode, ...(spec.context ? { context: spec.context } : {}) };
}

/** A new submission of `kind` with its own Idempotency-Key (and, for a write, its own key and value). */
export function newSubmission(kind: TaskKind): Submission {
  const key = randomUUID();
  return {
    kind,
    key,
    ...(kind === "write" ? { write: { key: `chaos/${key}`, value: `v-${randomUUID()}` } } : {}),
    attempts: 0,
    submittedAt: Date.now(),
  };
}

/** Where a submission is posted (its path is part of the submission's idempotency identity). */
export const submitUrl = (baseUrl: string): string => `${baseUrl}/tasks`;

/** Kinds whose tasks wait for an approval the approver gives. */
const APPROVED_KINDS = new Set<TaskKind>(["approval", "write"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export function startLoad(options: LoadOptions): Load {
  const submissions: Submission[] = [];
  const failures: FailedRequest[] = [];
  const headers = { "X-API-Key": options.apiKey, "Content-Type": "application/json" };
  const timeoutMs = options.requestTimeoutMs ?? 15_000;
  const retryForMs = options.retryForMs ?? 120_000;
  let stopped = false;

  const call = async (what: string, url: string, init: RequestInit): Promise<Response | undefined> => {
    try {
      const res = await fetch(url, { ...init, signal: AbortSignal.timeout(timeoutMs) });
      if (res.status >= 400) {
        const text = await res.text().catch(() => "");
        const shed = (res.status === 429 || res.status === 503) && res.headers.get("retry-after") !== null;
        failures.push({ at: Date.now(), what, status: res.status, error: text.slice(0, 200), shed });
        return res;
      }
      return res;
    } catch (err) {
      failures.push({ at: Date.now(), what, status: 0, error: (err as Error).message, shed: false });
      return undefined;
    }
  };

  const submitOne = async (s: Submission) => {
    const body = JSON.stringify(taskBody(s));
    const end = s.submittedAt + retryForMs;
    for (;;) {
      s.attempts++;
      const res = await call("submit", submitUrl(options.baseUrl), {
        method: "POST",
        headers: { ...headers, "Idempotency-Key": s.key },
        body,
      });
      if (res?.ok) {
        s.taskId = ((await res.json()) as { task_id: string }).task_id;
        return;
      }
      if (
        Date.now() > end ||
        (res && res.status >= 400 && res.status < 500 && res.status !== 409 && res.status !== 429)
      )
        return;
      const retryAfter = Number(res?.headers.get("retry-after") ?? "1");
      await sleep(Math.min(5_000, Math.max(200, retryAfter * 1_000)));
    }
  };

  const submitted = (async () => {
    const started = Date.now();
    const inflight: Promise<void>[] = [];
    for (let i = 0; i < options.tasks; i++) {
      const due = started + (i * 1_000) / options.rate;
      if (due > Date.now()) await sleep(due - Date.now());
      const s = newSubmission(kinds[i % kinds.length]!);
      submissions.push(s);
      inflight.push(submitOne(s));
    }
    await Promise.all(inflight);
  })();

  // Approves what the approval and write tasks ask for (each task once, by reading its history),
  // a few tasks at a time: with 1,000 tasks one poll after another would leave approvals waiting.
  const approved = new Set<string>();
  const approveOne = async (s: Submission) => {
    const res = await call("approval poll", `${options.baseUrl}/tasks/${s.taskId}/events?limit=200`, { headers });
    if (!res?.ok) return;
    const events = (
      (await res.json()) as {
        events: { type: string; data: { approval_id?: string; terminal?: boolean } }[];
      }
    ).events;
    if (events.some((e) => e.type === "WORKFLOW_COMPLETED" || (e.type === "ERROR_OCCURRED" && e.data.terminal))) {
      approved.add(s.taskId!);
      return;
    }
    const request = events.find((e) => e.type === "APPROVAL_REQUESTED");
    if (!request) return;
    const decision = await call("approve", `${options.baseUrl}/approvals/decision`, {
      method: "POST",
      headers,
      body: JSON.stringify({ workflow_id: s.taskId, approval_id: request.data.approval_id, approved: true }),
    });
    // 409: decided already (a retry after a lost answer).
    if (decision && (decision.ok || decision.status === 409)) approved.add(s.taskId!);
  };
  void (async () => {
    while (!stopped) {
      const waiting = submissions.filter((s) => APPROVED_KINDS.has(s.kind) && s.taskId && !approved.has(s.taskId));
      for (let i = 0; i < waiting.length && !stopped; i += 8)
        await Promise.all(waiting.slice(i, i + 8).map(approveOne));
      await sleep(300);
    }
  })();

  return {
    submissions,
    failures,
    submitted,
    stop() {
      stopped = true;
    },
  };
}
