import { Writable } from "node:stream";
import type { Express, RequestHandler } from "express";
import { createLogger, type Logger } from "@tog/core";
import { createRedis, type Redis } from "@tog/redis";
import { testInfraConfig } from "@tog/testkit";
import {
  createHttpApp,
  startHttpServer,
  type CorsSettings,
  type LoadShedder,
  type ServerTimeouts,
  type StartedServer,
} from "../src/index.ts";

// A small real app for edge tests: the shared stack, the test's routes, a real server on port 0.

export interface LogCapture {
  logger: Logger;
  lines: Array<Record<string, unknown>>;
}

/** A pino logger whose lines are parsed into `lines`. */
export function captureLogs(level = "info"): LogCapture {
  const lines: Array<Record<string, unknown>> = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, cb) {
      for (const line of chunk.toString("utf8").split("\n"))
        if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      cb();
    },
  });
  return { logger: createLogger({ service: "edge-test", level, destination }), lines };
}

/**
 * Stand-in for the auth middleware (another component): the caller is taken from test headers.
 * `x-test-key` → API key principal, `x-test-anon` → anonymous (auth off), else `x-test-user`.
 */
export const testPrincipal: RequestHandler = (req, _res, next) => {
  const user = req.get("x-test-user") ?? "user-1";
  const key = req.get("x-test-key");
  if (req.get("x-test-anon") === "1") req.principal = { userId: user, via: "anonymous" };
  else if (key !== undefined) req.principal = { userId: user, apiKeyId: key, via: "api_key" };
  else req.principal = { userId: user, via: "bearer_token" };
  next();
};

export interface TestApp {
  url: string;
  server: StartedServer;
  close(): Promise<void>;
}

export async function startTestApp(options: {
  routes: (app: Express) => void;
  logger?: Logger;
  cors?: CorsSettings;
  maxBodyBytes?: number;
  timeouts?: ServerTimeouts;
  shedder?: LoadShedder;
}): Promise<TestApp> {
  const app = createHttpApp({
    shedder: options.shedder,
    logger: options.logger ?? createLogger({ service: "edge-test", level: "silent" }),
    maxBodyBytes: options.maxBodyBytes ?? 1_048_576,
    cors: options.cors ?? { mode: "development", allowedOrigins: [] },
    routes: options.routes,
  });
  const server = await startHttpServer(app, {
    port: 0,
    host: "127.0.0.1",
    ...(options.timeouts ? { timeouts: options.timeouts } : {}),
  });
  return { url: `http://127.0.0.1:${server.port}`, server, close: () => server.close() };
}

export function testRedis(keyPrefix: string): Redis {
  return createRedis({ url: testInfraConfig.TEST_REDIS_URL, keyPrefix });
}

/** Deletes every key under a prefix (the client passed must have no keyPrefix of its own). */
export async function dropPrefix(raw: Redis, prefix: string): Promise<void> {
  let cursor = "0";
  do {
    const [next, keys] = await raw.scan(cursor, "MATCH", `${prefix}*`, "COUNT", 500);
    cursor = next;
    if (keys.length) await raw.del(...keys);
  } while (cursor !== "0");
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
