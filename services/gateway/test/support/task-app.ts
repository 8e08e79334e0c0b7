import { afterAll, beforeAll, beforeEach } from "vitest";
import { createLogger } from "@tog/core";
import { createDbClient, type Db } from "@tog/db";
import { createRedis, type Redis } from "@tog/redis";
import {
  AccessTokens,
  ApiKeyRepository,
  createAuth,
  createIdempotency,
  createRateLimiter,
  startHttpServer,
  type ApiDocs,
  type StartedServer,
} from "@tog/edge";
import {
  call,
  createTestDatabase,
  createTestUser,
  testInfraConfig,
  uniqueId,
  type TestDatabase,
  type TestUser,
} from "@tog/testkit";
import { createGatewayApp, GATEWAY_VERSION, taskRoutes } from "../../src/index.ts";
import { InMemoryOrchestrator } from "./in-memory-orchestrator.ts";

export { call, type TestUser };

// The gateway as main.ts builds it (real PostgreSQL for API keys, real Redis for rate limits and
// idempotency), with the task routes mounted on an in-memory orchestrator.

export interface TaskApp {
  base: string;
  docs: ApiDocs;
  orchestrator: InMemoryOrchestrator;
  tokens: AccessTokens;
  db: Db;
  /** A new user with an API key (own rate-limit budget). */
  newUser(label: string): Promise<TestUser>;
  close(): Promise<void>;
}

export const TEST_RPM = 1_000;

/**
 * Registers the hooks of a test file on one app: started before its tests with two users
 * (alice, bob), the orchestrator's recorded calls cleared before each test, closed after.
 */
export function useTaskApp(ready: (app: TaskApp, alice: TestUser, bob: TestUser) => void): void {
  let app: TaskApp | undefined;
  beforeAll(async () => {
    app = await startTaskApp();
    ready(app, await app.newUser("alice"), await app.newUser("bob"));
  });
  afterAll(async () => {
    await app?.close();
  });
  beforeEach(() => {
    app?.orchestrator.resetCalls();
  });
}

export async function startTaskApp(): Promise<TaskApp> {
  const database: TestDatabase = await createTestDatabase();
  const db = createDbClient({ databaseUrl: database.url, poolMax: 2 });
  const redis: Redis = createRedis({ url: testInfraConfig.TEST_REDIS_URL, keyPrefix: `${uniqueId("gwtasks")}:` });
  const tokens = new AccessTokens({ secret: "x".repeat(32), ttlSeconds: 60 });
  const orchestrator = new InMemoryOrchestrator();
  const logger = createLogger({ service: "gateway-tasks-test", level: "silent" });
  const { app, docs } = createGatewayApp({
    logger,
    version: GATEWAY_VERSION,
    auth: createAuth({ repository: new ApiKeyRepository({ db, cacheTtlMs: 0 }), tokens, skipAuth: false }),
    limits: createRateLimiter({ redis, rpm: TEST_RPM, burst: 10_000 }),
    idempotency: createIdempotency({ redis, ttlSeconds: 60 }),
    tokens,
    modules: [taskRoutes({ orchestrator })],
    cors: { mode: "development", allowedOrigins: [] },
    maxBodyBytes: 1_048_576,
    readinessChecks: [],
    readinessTimeoutMs: 1_000,
  });
  const server: StartedServer = await startHttpServer(app, { port: 0, host: "127.0.0.1" });
  return {
    base: `http://127.0.0.1:${server.port}`,
    docs,
    orchestrator,
    tokens,
    db,
    newUser: (label) => createTestUser(db, label),
    async close() {
      await server.close();
      redis.disconnect();
      await db.$disconnect();
      await database.drop();
    },
  };
}
