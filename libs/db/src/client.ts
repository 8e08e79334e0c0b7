import { PrismaPg } from "@prisma/adapter-pg";
import { PrismaClient } from "./generated/prisma/client.ts";

export interface DbClientOptions {
  databaseUrl: string;
  /** Connection pool size of this process. */
  poolMax?: number;
  /** PostgreSQL schema (search_path); tests isolate themselves with it. */
  schema?: string;
}

export type Db = PrismaClient;

export function createDbClient(options: DbClientOptions): Db {
  const adapter = new PrismaPg(
    { connectionString: options.databaseUrl, max: options.poolMax ?? 10 },
    options.schema ? { schema: options.schema } : undefined,
  );
  return new PrismaClient({ adapter });
}
