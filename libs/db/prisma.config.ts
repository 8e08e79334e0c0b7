import { defineConfig } from "prisma/config";

// Used by the Prisma CLI only (generate, and migrate deploy where a schema engine exists).
// The services never read it: they build their connection from their own config.
export default defineConfig({
  schema: "./prisma/schema.prisma",
  migrations: { path: "./prisma/migrations" },
  datasource: { url: process.env.DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/postgres" },
});
