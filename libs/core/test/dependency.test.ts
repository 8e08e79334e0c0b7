import { Writable } from "node:stream";
import { describe, expect, it } from "vitest";
import {
  createLogger,
  DependencyUnavailableError,
  redactUrl,
  startFailureFields,
  startFailureMessage,
  waitForDependency,
} from "../src/index.ts";

function capture() {
  const records: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const line of chunk.toString().split("\n").filter(Boolean))
        records.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { records, logger: createLogger({ service: "test", destination }) };
}

const pg = { name: "PostgreSQL", url: "postgresql://app:s3cret@db.internal:5432/tog", variable: "DATABASE_URL" };

describe("redactUrl", () => {
  it("drops the password and keeps the user", () => {
    expect(redactUrl("postgresql://app:s3cret@db:5432/tog")).toBe("postgresql://app@db:5432/tog");
    expect(redactUrl("redis://:pw@127.0.0.1:6379")).toBe("redis://127.0.0.1:6379");
    expect(redactUrl("nats://a:b@n1:4222, nats://n2:4222")).toBe("nats://a@n1:4222,nats://n2:4222");
    expect(redactUrl("postgresql://postgres@127.0.0.1/postgres")).toBe("postgresql://postgres@127.0.0.1/postgres");
  });
});

describe("waitForDependency", () => {
  it("retries with growing waits, naming the dependency, URL and variable, until it answers", async () => {
    const { records, logger } = capture();
    let calls = 0;
    const result = await waitForDependency(
      pg,
      async () => {
        if (++calls < 3) throw Object.assign(new Error("connect ECONNREFUSED 10.0.0.1:5432"), { code: "ECONNREFUSED" });
        return "up";
      },
      { logger, timeoutMs: 5_000, initialDelayMs: 10 },
    );
    expect(result).toBe("up");
    const warnings = records.filter((r) => r.level === "warn");
    expect(warnings.map((w) => w.retry_in_ms)).toEqual([10, 20]);
    for (const w of warnings) {
      expect(w.msg).toContain("PostgreSQL unreachable at postgresql://app@db.internal:5432/tog (set by DATABASE_URL)");
      expect(w.msg).toContain("ECONNREFUSED");
      expect(JSON.stringify(w)).not.toContain("s3cret");
      expect(w).not.toHaveProperty("err");
    }
    expect(records.at(-1)?.msg).toBe("PostgreSQL reachable at postgresql://app@db.internal:5432/tog");
  });

  it("gives up after the wait with one error that names everything and no secret", async () => {
    const { records, logger } = capture();
    const started = Date.now();
    const failure = await waitForDependency(pg, () => Promise.reject(new Error("getaddrinfo ENOTFOUND db.internal")), {
      logger,
      timeoutMs: 300,
      initialDelayMs: 50,
    }).catch((err: unknown) => err);
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(failure).toBeInstanceOf(DependencyUnavailableError);
    const message = (failure as Error).message;
    expect(message).toBe(
      "PostgreSQL unreachable at postgresql://app@db.internal:5432/tog (set by DATABASE_URL) for 0.3 s: getaddrinfo ENOTFOUND db.internal",
    );
    expect(records.length).toBeGreaterThanOrEqual(2);
    // the fatal line of a service: no error object (so no stack), the message says it all
    expect(startFailureFields(failure)).toEqual({
      dependency: "PostgreSQL",
      variable: "DATABASE_URL",
      url: "postgresql://app@db.internal:5432/tog",
    });
    expect(startFailureMessage(failure, "gateway failed to start")).toBe(`gateway failed to start: ${message}`);
    expect(startFailureFields(new Error("other"))).toHaveProperty("err");
  });

  it("bounds one silent attempt by its own deadline", async () => {
    const { logger } = capture();
    const failure = await waitForDependency(pg, () => new Promise(() => undefined), {
      logger,
      timeoutMs: 0,
      attemptTimeoutMs: 50,
    }).catch((err: unknown) => err as Error);
    expect((failure as Error).message).toContain("no answer within 50 ms");
  });

  it("shows the one useful line of a multi-line Prisma error", async () => {
    const { logger } = capture();
    const prismaLike = new Error(
      "\nInvalid `prisma.$queryRaw()` invocation:\n\n\nRaw query failed. Code: `N/A`. Message: `Can't reach database server at 127.0.0.1:1`",
    );
    const failure = await waitForDependency(pg, () => Promise.reject(prismaLike), { logger, timeoutMs: 0 }).catch(
      (err: unknown) => err as Error,
    );
    expect((failure as Error).message).toMatch(/: Can't reach database server at 127\.0\.0\.1:1$/);
  });
});
