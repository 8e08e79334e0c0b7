// Stream subscribers of the chaos scenarios, written as applications write them: SSE or
// WebSocket, reconnecting after a drop with the last id seen (Last-Event-ID / last_event_id),
// until the task's terminal event. Then each subscription is checked against the permanent log.
import pg from "pg";
import { followSse, followWs, sseUrl, wsUrl, type Connection } from "@tog/tests-e2e";

export interface Subscription {
  taskId: string;
  transport: "sse" | "ws";
  connections: Connection[];
  events: { seq?: unknown }[];
  error?: string;
}

/** Follows one task to its terminal event (at most `timeoutMs`). */
export async function follow(options: {
  baseUrl: string;
  apiKey: string;
  taskId: string;
  transport: "sse" | "ws";
  timeoutMs: number;
}): Promise<Subscription> {
  const { baseUrl, apiKey, taskId, transport, timeoutMs } = options;
  const headers = { "X-API-Key": apiKey };
  try {
    const r =
      transport === "sse"
        ? await followSse({ url: () => sseUrl(baseUrl, { workflow_id: taskId }), headers, timeoutMs })
        : await followWs({ url: () => wsUrl(baseUrl), headers, taskId: taskId, timeoutMs });
    return { taskId, transport, connections: r.connections, events: r.events };
  } catch (err) {
    return { taskId, transport, connections: [], events: [], error: (err as Error).message };
  }
}

export interface StreamVerdict {
  subscriptions: number;
  /** Subscriptions that got events on more than one connection: they resumed after a drop. */
  resumed: number;
  /** Subscriptions whose distinct seqs are not exactly 1..n. */
  gaps: number;
  /** Events received twice in all: on one connection, or again after the resume point sent. */
  duplicates: number;
  /** Of those, seqs at or before the resume point the client sent (beyond at-least-once). */
  duplicatesBeforeResumePoint: number;
  /** Subscriptions whose distinct events are not every event of the task's permanent log. */
  incomplete: number;
  /** Subscriptions that gave up without the terminal event. */
  gaveUp: number;
}

/**
 * Checks every subscription against the permanent log (task_events), first waiting (up to 30 s)
 * until the log holds what the subscribers saw end: the persister may still be catching up.
 */
export async function verifyStreams(databaseUrl: string, subscriptions: Subscription[]): Promise<StreamVerdict> {
  const lastSeq = new Map<string, number>();
  for (const s of subscriptions)
    lastSeq.set(s.taskId, Math.max(lastSeq.get(s.taskId) ?? 0, ...s.events.map((e) => e.seq as number)));
  const taskIds = [...lastSeq.keys()];
  const client = new pg.Client({ connectionString: databaseUrl });
  await client.connect();
  let logged = new Map<string, number>();
  try {
    for (const end = Date.now() + 30_000; ; ) {
      const res = await client.query<{ id: string; n: number }>(
        `SELECT task_id::text AS id, count(*)::int AS n FROM task_events WHERE task_id = ANY($1::uuid[]) GROUP BY 1`,
        [taskIds],
      );
      logged = new Map(res.rows.map((r) => [r.id, r.n]));
      if ([...lastSeq].every(([id, seq]) => (logged.get(id) ?? 0) >= seq) || Date.now() > end) break;
      await new Promise((r) => setTimeout(r, 250));
    }
  } finally {
    await client.end();
  }
  const verdict: StreamVerdict = {
    subscriptions: subscriptions.length,
    resumed: 0,
    gaps: 0,
    duplicates: 0,
    duplicatesBeforeResumePoint: 0,
    incomplete: 0,
    gaveUp: 0,
  };
  for (const s of subscriptions) {
    if (s.error) verdict.gaveUp++;
    const seqs = s.events.map((e) => e.seq as number);
    const unique = [...new Set(seqs)].sort((a, b) => a - b);
    verdict.duplicates += seqs.length - unique.length;
    for (const c of s.connections)
      verdict.duplicatesBeforeResumePoint += c.seqs.filter((q) => q <= c.resumeAfter).length;
    if (unique.some((q, i) => q !== i + 1)) verdict.gaps++;
    if (unique.length !== logged.get(s.taskId)) verdict.incomplete++;
    if (s.connections.filter((c) => c.seqs.length > 0).length > 1) verdict.resumed++;
  }
  return verdict;
}

export function describeStreams(v: StreamVerdict): string {
  return `${v.subscriptions} subscriptions, ${v.resumed} resumed after a drop; with a gap after dedup: ${v.gaps}; duplicates: ${v.duplicates} (at or before the resume point sent: ${v.duplicatesBeforeResumePoint}); not matching the permanent log: ${v.incomplete}; gave up: ${v.gaveUp}`;
}

/**
 * `count` subscribers that each follow one task after another — a task `pick` returns (a recent
 * one of the load), alternately SSE and WebSocket — until `stop`, which resolves with every
 * subscription once the ones under way reached their terminal event. A subscriber starts at most
 * one subscription per `intervalMs`: a finished task replays in milliseconds, and unpaced the
 * subscribers became a busy loop (6,000 subscriptions a minute) that starved the rollout they
 * watch on a loaded CI machine.
 */
export function keepFollowing(options: {
  baseUrl: string;
  apiKey: string;
  count: number;
  pick: () => string | undefined;
  timeoutMs: number;
  intervalMs?: number;
}): { stop(): Promise<Subscription[]> } {
  const intervalMs = options.intervalMs ?? 1_000;
  const subscriptions: Subscription[] = [];
  let stopped = false;
  const loops = Array.from({ length: options.count }, async (_, i) => {
    for (let n = 0; !stopped; n++) {
      const taskId = options.pick();
      if (!taskId) {
        await new Promise((r) => setTimeout(r, 200));
        continue;
      }
      const transport = (i + n) % 2 === 0 ? "sse" : "ws";
      const started = Date.now();
      subscriptions.push(await follow({ ...options, taskId, transport }));
      const rest = started + intervalMs - Date.now();
      if (rest > 0 && !stopped) await new Promise((r) => setTimeout(r, rest));
    }
  });
  return {
    async stop() {
      stopped = true;
      await Promise.all(loops);
      return subscriptions;
    },
  };
}
