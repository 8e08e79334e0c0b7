// What a scenario left behind, read from its own PostgreSQL after the load drained: lost
// tasks, duplicated effects, seq gaps and events missing from the permanent log.
import pg from "pg";
import { idempotencyIdentity } from "@tog/edge";
import { submitUrl, taskBody, type Submission } from "./load.ts";

export interface Verdict {
  /** Submissions the clients made. */
  submitted: number;
  /** Submissions that never got a task id (gave up after retrying). */
  refused: number;
  completed: number;
  failed: number;
  /** Accepted tasks not terminal when the drain ended, or missing from the database. */
  lost: number;
  /**
   * Task rows no client got an id for and that belong to no submission that gave up: a retried
   * submit that created a second task, or a row no client asked for.
   */
  duplicateTasks: number;
  /**
   * Task rows no client got an id for whose stored idempotency identity is that of a submission
   * that gave up: accepted after the client's last request timed out (under overload), not a
   * second task for one submission.
   */
  acceptedAfterGivingUp: number;
  /**
   * Effect events (LLM_OUTPUT, TOOL_OBSERVATION, WORKSPACE_UPDATED, APPROVAL_DECISION,
   * WORKFLOW_STARTED, terminal) in the log beyond what the checkpoints committed: a step that
   * took effect twice.
   */
  duplicatedEffects: number;
  /** Tasks whose logged seqs are not exactly 1..n. */
  seqGaps: number;
  /** Seqs committed with a checkpoint (a step's range) that the permanent log (task_events) does not hold. */
  missingFromLog: number;
  /**
   * Write tasks accepted (workspace_write of a key and value unique to the task), and how often
   * each write took effect: the task's workspace is the WORKSPACE_UPDATED entries of the
   * permanent log (docs/reliability.md), counted by key across every task, checked against the
   * checkpoint that committed it.
   */
  writes: number;
  writesOnce: number;
  /** Writes with no effect (or another value) after the drain. */
  writesLost: number;
  /** Writes whose key was set more than once (in the log or by more than one checkpoint). */
  writesDuplicated: number;
}

/** How often each write's key was set with its value: in the permanent log, and by events a checkpoint committed. */
export async function countWrites(
  client: pg.Client,
  writes: { key: string; value: string }[],
): Promise<{ once: number; lost: number; duplicated: number }> {
  const keys = writes.map((w) => w.key);
  const logged = await client.query<{ key: string; value: string | null; n: number }>(
    `SELECT event::jsonb->'data'->>'key' AS key, event::jsonb->'data'->>'value' AS value, count(*)::int AS n
       FROM task_events WHERE type = 'WORKSPACE_UPDATED' AND event::jsonb->'data'->>'key' = ANY($1::text[])
      GROUP BY 1, 2`,
    [keys],
  );
  // A step row keeps its events' seq range; the events themselves are in the log
  // (docs/performance.md "Each event's JSON once").
  const committed = await client.query<{ key: string; n: number }>(
    `SELECT e.event::jsonb->'data'->>'key' AS key, count(*)::int AS n
       FROM task_events e
      WHERE e.type = 'WORKSPACE_UPDATED' AND e.event::jsonb->'data'->>'key' = ANY($1::text[])
        AND EXISTS (SELECT 1 FROM task_steps s WHERE s.task_id = e.task_id AND e.seq BETWEEN s.first_seq AND s.last_seq)
      GROUP BY 1`,
    [keys],
  );
  const inLog = new Map<string, { value: string | null; n: number }[]>();
  for (const r of logged.rows) inLog.set(r.key, [...(inLog.get(r.key) ?? []), { value: r.value, n: r.n }]);
  const inSteps = new Map(committed.rows.map((r) => [r.key, r.n]));
  let once = 0;
  let lost = 0;
  let duplicated = 0;
  for (const w of writes) {
    const rows = inLog.get(w.key) ?? [];
    const total = rows.reduce((n, r) => n + r.n, 0);
    const steps = inSteps.get(w.key) ?? 0;
    if (total > 1 || steps > 1) duplicated++;
    else if (total === 1 && steps === 1 && rows[0]?.value === w.value) once++;
    else lost++;
  }
  return { once, lost, duplicated };
}

const TERMINAL_STATUSES = new Set(["COMPLETED", "FAILED", "CANCELLED", "TIMEOUT"]);
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Waits (up to `drainMs`) until every accepted task is terminal, its terminal event is logged and
 * its logged seqs have no gap (the persister may still be catching up after a fault).
 */
export async function drain(databaseUrl: string, taskIds: string[], drainMs: number): Promise<number> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  const started = Date.now();
  try {
    for (;;) {
      const res = await client.query<{ n: number }>(
        `SELECT count(*)::int AS n FROM tasks t WHERE t.id = ANY($1::uuid[]) AND t.status IN ('COMPLETED','FAILED','CANCELLED','TIMEOUT')
           AND EXISTS (SELECT 1 FROM task_events e WHERE e.task_id = t.id AND (e.type = 'WORKFLOW_COMPLETED' OR (e.type = 'ERROR_OCCURRED' AND (e.event::jsonb->'data'->>'terminal')::boolean)))
           AND (SELECT count(*) = max(seq) FROM task_events e WHERE e.task_id = t.id)`,
        [taskIds],
      );
      if (res.rows[0]!.n >= taskIds.length || Date.now() - started > drainMs) return Date.now() - started;
      await sleep(500);
    }
  } finally {
    await client.end();
  }
}

/** Who submitted, and where: what a submission's idempotency identity is made of. */
export interface Submitter {
  userId: string;
  /** The public base URL the load posted to. */
  baseUrl: string;
}

/**
 * The identities the gateway stores on the rows of `submissions` (libs/edge/src/idempotency.ts).
 * The gateway sees the public path: the router forwards it unchanged.
 */
function identitiesOf(submissions: Submission[], submitter: Submitter): Set<string> {
  const path = new URL(submitUrl(submitter.baseUrl)).pathname;
  return new Set(
    submissions.map((s) =>
      idempotencyIdentity({ key: s.key, userId: submitter.userId, path, body: JSON.stringify(taskBody(s)) }),
    ),
  );
}

/** `otherIds`: tasks the scenario itself submitted (probes), not the clients. */
export async function verify(
  databaseUrl: string,
  submissions: Submission[],
  submitter: Submitter,
  otherIds: string[] = [],
): Promise<Verdict> {
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  try {
    const ids = submissions.flatMap((s) => (s.taskId ? [s.taskId] : []));
    const statuses = await client.query<{ id: string; status: string; identity: string | null }>(
      `SELECT id::text, status, idempotency_key AS identity FROM tasks`,
    );
    const byId = new Map(statuses.rows.map((r) => [r.id, r.status]));
    const known = new Set([...ids, ...otherIds]);
    const count = (pred: (status: string | undefined) => boolean) => ids.filter((id) => pred(byId.get(id))).length;

    const gaps = await client.query<{ n: number }>(
      `SELECT count(*)::int AS n FROM (SELECT task_id FROM task_events GROUP BY task_id HAVING count(*) <> max(seq) OR min(seq) <> 1) g`,
    );
    // Effect events in the log that no checkpoint committed: outside every step's seq range.
    const effects = await client.query<{ n: number }>(`
      SELECT count(*)::int AS n FROM task_events e
      WHERE (e.type IN ('LLM_OUTPUT','TOOL_OBSERVATION','WORKSPACE_UPDATED','APPROVAL_DECISION','WORKFLOW_STARTED','WORKFLOW_COMPLETED')
             OR (e.type = 'ERROR_OCCURRED' AND (e.event::jsonb->'data'->>'terminal')::boolean))
        AND NOT EXISTS (SELECT 1 FROM task_steps s WHERE s.task_id = e.task_id AND e.seq BETWEEN s.first_seq AND s.last_seq)`);
    // Seqs a checkpoint committed that the log does not hold.
    const missing = await client.query<{ n: number }>(`
      SELECT count(*)::int AS n FROM task_steps s, generate_series(s.first_seq, s.last_seq) q(seq)
      WHERE s.first_seq IS NOT NULL
        AND NOT EXISTS (SELECT 1 FROM task_events t WHERE t.task_id = s.task_id AND t.seq = q.seq)`);

    const gaveUp = identitiesOf(
      submissions.filter((s) => !s.taskId),
      submitter,
    );
    const unknown = statuses.rows.filter((r) => !known.has(r.id));
    const late = unknown.filter((r) => r.identity !== null && gaveUp.has(r.identity)).length;

    const writes = submissions.flatMap((s) => (s.write && s.taskId ? [s.write] : []));
    const written = await countWrites(client, writes);

    return {
      submitted: submissions.length,
      refused: submissions.filter((s) => !s.taskId).length,
      completed: count((s) => s === "COMPLETED"),
      failed: count((s) => s !== undefined && s !== "COMPLETED" && TERMINAL_STATUSES.has(s)),
      lost: count((s) => s === undefined || !TERMINAL_STATUSES.has(s)),
      duplicateTasks: unknown.length - late,
      acceptedAfterGivingUp: late,
      duplicatedEffects: effects.rows[0]!.n,
      seqGaps: gaps.rows[0]!.n,
      missingFromLog: missing.rows[0]!.n,
      writes: writes.length,
      writesOnce: written.once,
      writesLost: written.lost,
      writesDuplicated: written.duplicated,
    };
  } finally {
    await client.end();
  }
}
