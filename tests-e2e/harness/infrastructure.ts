import { e2eConfig } from "./config.ts";

export interface Infrastructure {
  databaseAdminUrl: string;
  redisUrl: string;
  natsUrl: string;
  /** "local": the machine's services; "containers": started for this test file. */
  kind: "local" | "containers";
  stop(): Promise<void>;
}

type Testkit = typeof import("@tog/testkit");

/**
 * Where PostgreSQL, Redis and NATS are for this test file, and the test kit bound to them.
 * With E2E_TESTCONTAINERS=1 (and Docker reachable) they run in containers; the test kit reads
 * its TEST_* variables when first imported, so they are set before that import.
 */
export async function acquireInfrastructure(): Promise<{ infra: Infrastructure; testkit: Testkit }> {
  if (e2eConfig.E2E_TESTCONTAINERS) {
    let containers: Awaited<ReturnType<typeof import("./containers.ts").startContainers>> | undefined;
    try {
      const { startContainers } = await import("./containers.ts");
      containers = await startContainers();
    } catch (err) {
      process.stderr.write(
        `[e2e] E2E_TESTCONTAINERS=1 but containers could not start (${(err as Error).message}); using local services\n`,
      );
    }
    if (containers) {
      // The test kit's own config reads these (it is the one consumer of TEST_* variables).
      process.env.TEST_DATABASE_ADMIN_URL = containers.databaseAdminUrl;
      process.env.TEST_REDIS_URL = containers.redisUrl;
      process.env.TEST_NATS_URL = containers.natsUrl;
      const testkit = await import("@tog/testkit");
      if (testkit.testInfraConfig.TEST_DATABASE_ADMIN_URL !== containers.databaseAdminUrl) {
        await containers.stop();
        throw new Error("@tog/testkit was imported before the containers started; import it only through the harness");
      }
      return { infra: { ...containers, kind: "containers" }, testkit };
    }
  }
  const testkit = await import("@tog/testkit");
  const c = testkit.testInfraConfig;
  return {
    infra: {
      databaseAdminUrl: c.TEST_DATABASE_ADMIN_URL,
      redisUrl: c.TEST_REDIS_URL,
      natsUrl: c.TEST_NATS_URL,
      kind: "local",
      stop: async () => undefined,
    },
    testkit,
  };
}
