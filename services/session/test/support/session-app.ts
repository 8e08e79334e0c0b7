import { randomUUID } from "node:crypto";
import { createLogger } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import { createRedis, type Redis } from "@tog/redis";
import {
  AccessTokens,
  ApiKeyRepository,
  createAuth,
  createRateLimiter,
  startHttpServer,
  type StartedServer,
} from "@tog/edge";
import { publishSessionChanged } from "@tog/bus";
import { isTerminalStatus } from "@tog/events";
import {
  call,
  createTestDatabase,
  createTestUser,
  openTestBus,
  testInfraConfig,
  uniqueId,
  type TestDatabase,
  type TestUser,
} from "@tog/testkit";
import { createSessionApp } from "../../src/app.ts";
import { startChangeFeed, type ChangeFeed } from "../../src/sessions/change-feed.ts";
import { SessionCache } from "../../src/sessions/session-cache.ts";
import { SessionRepository } from "@tog/task-data";
import { SessionService } from "../../src/sessions/session.service.ts";

export { call, type TestUser };

// The session service as main.ts builds it (real PostgreSQL, Redis and NATS, the change feed), in
// this process; rows of sessions, tasks and events are written directly as the orchestrator
// and the event persister would.

export interface SessionApp {
  base: string;
  db: Db;
  redis: Redis;
  cache: SessionCache;
  /** What the orchestrator and the workers send after they change a session or its tasks. */
  sessionChanged(sessionId: string): Promise<void>;
  newUser(label: string): Promise<TestUser>;
  close(): Promise<void>;
}

export const logger = createLogger({ service: "session-test", level: "silent" });

export async function startSessionApp(
  options: { cacheTtlSeconds?: number; retentionDays?: number; localBytes?: number; localMaxAgeMs?: number } = {},
): Promise<SessionApp> {
  const database: TestDatabase = await createTestDatabase();
  const db = createDbClient({ databaseUrl: database.url, poolMax: 4 });
  const redis = createRedis({ url: testInfraConfig.TEST_REDIS_URL, keyPrefix: `${uniqueId("sess")}:` });
  // Local copies as main.ts keeps them by default (SESSION_CACHE_LOCAL_MB).
  const cache = new SessionCache({
    redis,
    ttlSeconds: options.cacheTtlSeconds ?? 60,
    localBytes: options.localBytes ?? 64 * 1_048_576,
    localMaxAgeMs: options.localMaxAgeMs,
    logger,
  });
  const bus = await openTestBus("sess");
  const feed: ChangeFeed = startChangeFeed({
    bus,
    logger,
    onChange: (ids) => void cache.invalidate(...ids),
    onUp: () => cache.feedUp(),
    onDown: () => cache.feedDown(),
  });
  await feed.ready;
  const { app } = createSessionApp({
    logger,
    auth: createAuth({
      repository: new ApiKeyRepository({ db, cacheTtlMs: 0 }),
      tokens: new AccessTokens({ secret: "x".repeat(32), ttlSeconds: 60 }),
      skipAuth: false,
    }),
    limits: createRateLimiter({ redis, rpm: 10_000, burst: 10_000 }),
    cors: { mode: "development", allowedOrigins: [] },
    maxBodyBytes: 1_048_576,
    service: new SessionService({ repository: new SessionRepository({ db }), cache }),
    retentionDays: options.retentionDays ?? 30,
    db,
    redis,
    readinessTimeoutMs: 1_000,
  });
  const server: StartedServer = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  return {
    base: `http://127.0.0.1:${server.port}`,
    db,
    redis,
    cache,
    async sessionChanged(sessionId) {
      publishSessionChanged(bus, sessionId);
      await bus.nc.flush();
    },
    newUser: (label) => createTestUser(db, label),
    async close() {
      await server.close();
      await feed.stop();
      await bus.close();
      redis.disconnect();
      await db.$disconnect();
      await database.drop();
    },
  };
}

export async function insertSession(
  db: Db,
  userId: string,
  over: { id?: string; externalId?: string; lastActivityAt?: Date; budget?: number } = {},
): Promise<string> {
  const id = over.id ?? randomUUID();
  const context = over.externalId ? { external_id: over.externalId } : {};
  await db.$executeRaw`
    INSERT INTO sessions (id, user_id, external_id, token_budget, context, last_activity_at)
    VALUES (${id}::uuid, ${userId}::uuid, ${over.externalId ?? null}, ${over.budget ?? 1_000_000}, ${JSON.stringify(context)}::jsonb, ${over.lastActivityAt ?? new Date()})`;
  return id;
}

export interface TaskFixture {
  query?: string;
  status?: string;
  result?: string | null;
  createdAt?: Date;
  totalTokens?: number | null;
  events?: Array<{ type: string; agent_id?: string; message?: string; data?: Record<string, unknown> }>;
  /** The `finish` step as releases before "Each event's JSON once" wrote it: the terminal event in the row. */
  earlierRelease?: boolean;
}

/** A task row as the orchestrator leaves it, and its events as the persister stores them. */
export async function insertTask(db: Db, userId: string, sessionId: string, t: TaskFixture = {}): Promise<string> {
  const id = randomUUID();
  const status = t.status ?? "COMPLETED";
  const terminal = isTerminalStatus(status);
  const created = t.createdAt ?? new Date();
  await db.$executeRaw`
    INSERT INTO tasks (id, user_id, session_id, query, status, mode, spec, result, trace_id, total_tokens, input_tokens, output_tokens, cost_usd,
                       created_at, started_at, completed_at, updated_at)
    VALUES (${id}::uuid, ${userId}::uuid, ${sessionId}::uuid, ${t.query ?? "q"}, ${status}, 'EXECUTION_MODE_SIMPLE', '{}'::jsonb,
            ${t.result === undefined ? (status === "COMPLETED" ? "answer" : null) : t.result}, ${"0".repeat(32)},
            ${t.totalTokens === undefined ? 10 : t.totalTokens}, 4, 6, 0.001,
            ${created}, ${created}, ${terminal ? new Date(created.getTime() + 1_500) : null}, now())`;
  // The orchestrator's submit counts the task on its session in the same transaction.
  await db.$executeRaw`UPDATE sessions SET task_count = task_count + 1 WHERE id = ${sessionId}::uuid`;
  const events = t.events ?? [];
  for (const [i, e] of events.entries()) {
    const seq = i + 1;
    const timestamp = new Date(created.getTime() + seq).toISOString();
    const event = {
      workflow_id: id,
      type: e.type,
      agent_id: e.agent_id ?? "orchestrator",
      message: e.message ?? e.type,
      timestamp,
      seq,
      stream_id: `${Date.parse(timestamp)}-${seq}`,
      data: e.data ?? {},
    };
    await db.$executeRaw`
      INSERT INTO task_events (task_id, seq, type, agent_id, "timestamp", event)
      VALUES (${id}::uuid, ${seq}, ${e.type}, ${event.agent_id}, ${timestamp}::timestamptz, ${JSON.stringify(event)}::json)`;
    if (terminal && seq === events.length) {
      // The runtime checkpoints the terminal event's seq with the final status as step `finish`,
      // its output holding a completed run's counts (services/orchestrator runtime/final-write.ts).
      const data = event.data as { agents_used?: number; tools_invoked?: number };
      const output = t.earlierRelease
        ? { status }
        : {
            status,
            ...(data.agents_used === undefined
              ? {}
              : { agents_used: data.agents_used, tools_invoked: data.tools_invoked }),
          };
      const inRow = t.earlierRelease ? JSON.stringify([event]) : null;
      await db.$executeRaw`
        INSERT INTO task_steps (task_id, key, kind, name, agent_id, status, output, events, first_seq, last_seq, started_at, completed_at)
        VALUES (${id}::uuid, 'finish', 'finish', ${status}, 'orchestrator', 'completed', ${JSON.stringify(output)}::jsonb, ${inRow}::json, ${seq}, ${seq}, now(), now())`;
    }
  }
  return id;
}

/** Events of a typical simple run that ended COMPLETED. */
export function completedRun(result: string): TaskFixture["events"] {
  return [
    { type: "WORKFLOW_STARTED" },
    { type: "AGENT_STARTED", agent_id: "generalist" },
    { type: "LLM_PROMPT", agent_id: "generalist" },
    { type: "LLM_PARTIAL", agent_id: "generalist", data: { chunk: result.slice(0, 5) } },
    { type: "LLM_PARTIAL", agent_id: "generalist", data: { chunk: result.slice(5) } },
    { type: "LLM_OUTPUT", agent_id: "generalist", message: "Response from offline-small", data: { output: result } },
    { type: "AGENT_COMPLETED", agent_id: "generalist" },
    { type: "WORKFLOW_COMPLETED", data: { result, agents_used: 1, tools_invoked: 0 } },
  ];
}
