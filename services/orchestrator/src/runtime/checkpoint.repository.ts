import type { DbPool } from "@tog/db";
import { GroupCommit } from "./group-commit.ts";
import { linesArray } from "./json-lines.ts";
import type { StepRecord } from "./run.repository.ts";
import { stepColumns, stepEventColumns, withStepJsonAsLines } from "./step-columns.ts";

// Step checkpoints of all runs of one worker process, group-committed (group-commit.ts): one
// `INSERT … SELECT FROM unnest(…)` per batch. Each row is fenced by its run's lease as before: a
// row whose task is no longer leased by its owner (or whose key exists already) is not written
// and its caller gets `false`. The steps' events go into the permanent log in the same statement,
// under the same fence. The fence locks the task rows (FOR SHARE, in id order like every statement
// that locks several) so that a claim by another worker either waits for this write or is seen by
// it, never runs beside it (docs/reliability.md "The lease fence"). docs/performance.md
// "Checkpoints", "The log before the bus".

export interface Checkpoint {
  taskId: string;
  owner: string;
  /** Written together (one statement) or not at all: a step with the lazy steps before it. */
  steps: StepRecord[];
  /** Also records the run's execution mode on the task. */
  mode?: string | undefined;
}

// raw: an `unnest` batch fenced by a join on the lease, which Prisma cannot say (docs/performance.md "Run").
const BATCH_SQL = `
  WITH v AS (
    SELECT * FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[], ${linesArray("$7")},
                         $8::int[], $9::int[], $10::timestamptz[], $11::timestamptz[], $12::text[], $13::text[])
      AS v(task_id, key, kind, name, agent_id, status, output, first_seq, last_seq, started_at, completed_at, owner, mode)
  ),
  ok AS (
    SELECT v.* FROM v JOIN tasks t ON t.id = v.task_id AND t.lease_owner = v.owner AND t.status = 'RUNNING'
    ORDER BY v.task_id FOR SHARE OF t
  ),
  m AS (
    UPDATE tasks SET mode = ok.mode, updated_at = now() FROM ok WHERE tasks.id = ok.task_id AND ok.mode IS NOT NULL
  ),
  i AS (
    INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, output, first_seq, last_seq, started_at, completed_at)
    SELECT task_id, key, kind, name, agent_id, status, output::jsonb, first_seq, last_seq, started_at, completed_at FROM ok
    ON CONFLICT (task_id, key) DO NOTHING
    RETURNING task_id, key
  ),
  e AS (
    INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
    SELECT u.task_id, u.seq, u.type, u.agent_id, u.ts, u.event::json
    FROM unnest($14::uuid[], $15::int[], $16::text[], $17::text[], $18::timestamptz[], ${linesArray("$19")})
      AS u(task_id, seq, type, agent_id, ts, event)
    WHERE u.task_id IN (SELECT task_id FROM ok)
    ON CONFLICT (task_id, seq) DO NOTHING
  )
  SELECT task_id::text AS task_id, key FROM i`;

export class CheckpointRepository {
  readonly #pool: DbPool;
  readonly #group: GroupCommit<Checkpoint, boolean>;

  constructor(options: { pool: DbPool; maxBatch?: number }) {
    this.#pool = options.pool;
    this.#group = new GroupCommit({ flush: (items) => this.#insert(items), maxBatch: options.maxBatch });
  }

  /** Resolves true once every step is written, false when fenced off (lease lost or a step already stored). */
  write(checkpoint: Checkpoint): Promise<boolean> {
    return this.#group.submit(checkpoint);
  }

  async #insert(checkpoints: Checkpoint[]): Promise<boolean[]> {
    const cols: unknown[][] = Array.from({ length: 13 }, () => []);
    for (const c of checkpoints) {
      c.steps.forEach((s, i) => {
        const values = [c.taskId, ...stepColumns(s), c.owner, i === c.steps.length - 1 ? (c.mode ?? null) : null];
        values.forEach((v, k) => cols[k]!.push(v));
      });
    }
    const events = stepEventColumns(checkpoints.flatMap((c) => c.steps));
    const res = await this.#pool.query<{ task_id: string; key: string }>({
      name: "checkpoint-batch",
      text: BATCH_SQL,
      values: [...withStepJsonAsLines(cols, 1), ...events],
    });
    const written = new Set(res.rows.map((r) => keyOf(r.task_id, r.key)));
    return checkpoints.map((c) => c.steps.every((s) => written.has(keyOf(c.taskId, s.key))));
  }
}

function keyOf(taskId: string, key: string): string {
  return `${taskId.toLowerCase()}\u0000${key}`;
}
