import { z } from "zod";

export const dbConfigShape = {
  DATABASE_URL: z
    .string()
    .min(1)
    .default("postgresql://postgres@127.0.0.1:5432/postgres")
    .describe("PostgreSQL connection URL."),
  DATABASE_POOL_MAX: z.coerce
    .number()
    .int()
    .min(1)
    .max(200)
    .default(10)
    .describe("Connections in this process's pool."),
};
