import { fileURLToPath } from "node:url";

export const SCHEMA_PATH = fileURLToPath(new URL("../prisma/schema.prisma", import.meta.url));
export const MIGRATIONS_DIR = fileURLToPath(new URL("../prisma/migrations", import.meta.url));
