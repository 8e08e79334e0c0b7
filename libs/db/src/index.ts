export { createDbClient, createDbPool, type Db, type DbClientOptions, type DbPool } from "./client.ts";
export { migrate, readMigrations, type MigrateOptions, type MigrationFile } from "./migrate.ts";
export { dbConfigShape } from "./config.ts";
export { pingDb, type PingableDb } from "./ping.repository.ts";
export { withTryAdvisoryLock } from "./advisory-lock.repository.ts";
export { SCHEMA_PATH, MIGRATIONS_DIR } from "./paths.ts";
export { Prisma } from "./generated/prisma/client.ts";
export type {
  User,
  ApiKey,
  Session,
  Task,
  TaskStep,
  Approval,
  TaskSignal,
  TaskEvent as TaskEventRecord,
} from "./generated/prisma/client.ts";
export { withClient, withTransaction } from "./transaction.repository.ts";
export { sqlArray, sqlLiteral } from "./sql-literal.ts";
