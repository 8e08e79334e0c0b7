// Only imported (dynamically) when E2E_TESTCONTAINERS=1, so the default path never loads
// testcontainers. One PostgreSQL, Redis and NATS (JetStream) container per test file.
import { GenericContainer, Wait, type StartedTestContainer } from "testcontainers";

export interface ContainerInfrastructure {
  databaseAdminUrl: string;
  redisUrl: string;
  natsUrl: string;
  stop(): Promise<void>;
}

export async function startContainers(): Promise<ContainerInfrastructure> {
  const started: StartedTestContainer[] = [];
  try {
    const [pg, redis, nats] = await Promise.all([
      new GenericContainer("postgres:15-alpine")
        .withEnvironment({ POSTGRES_HOST_AUTH_METHOD: "trust" })
        .withExposedPorts(5432)
        .withWaitStrategy(Wait.forLogMessage(/database system is ready to accept connections/, 2))
        .start()
        .then((c) => (started.push(c), c)),
      new GenericContainer("redis:7-alpine")
        .withExposedPorts(6379)
        .withWaitStrategy(Wait.forLogMessage(/Ready to accept connections/))
        .start()
        .then((c) => (started.push(c), c)),
      new GenericContainer("nats:2.9-alpine")
        .withCommand(["-js"])
        .withExposedPorts(4222)
        .withWaitStrategy(Wait.forLogMessage(/Server is ready/))
        .start()
        .then((c) => (started.push(c), c)),
    ]);
    return {
      databaseAdminUrl: `postgresql://postgres@${pg.getHost()}:${pg.getMappedPort(5432)}/postgres`,
      redisUrl: `redis://${redis.getHost()}:${redis.getMappedPort(6379)}`,
      natsUrl: `nats://${nats.getHost()}:${nats.getMappedPort(4222)}`,
      stop: async () => {
        await Promise.all(started.map((c) => c.stop()));
      },
    };
  } catch (err) {
    await Promise.allSettled(started.map((c) => c.stop()));
    throw err;
  }
}
