export { testInfraConfig, testInfraConfigShape, uniqueId } from "./infra.ts";
export { createTestDatabase, type TestDatabase } from "./database.ts";
