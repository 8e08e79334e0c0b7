// `npm run db:migrate`: applies pending migrations to DATABASE_URL.
import { baseConfigShape, createLogger, loadConfig } from "@tog/core";
import { dbConfigShape } from "../config.ts";
import { migrate } from "../migrate.ts";

const config = loadConfig({ ...baseConfigShape, ...dbConfigShape });
const logger = createLogger({ service: "db-migrate", level: config.LOG_LEVEL });
try {
  const applied = await migrate({ databaseUrl: config.DATABASE_URL, logger });
  logger.info({ applied: applied.length }, applied.length ? "database migrated" : "database already up to date");
} catch (err) {
  logger.error({ err }, "migration failed");
  process.exitCode = 1;
}
